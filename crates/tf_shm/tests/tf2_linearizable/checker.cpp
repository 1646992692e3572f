// The reference of tests/tf2_linearizable.rs: ROS 2 Jazzy's tf2::BufferCore fed the writer's
// inserts in order; every logged read must equal BufferCore's answer after some prefix in its
// window [lo, hi] that ends a moment (a batch, or one insert or clear).
//
// Usage: checker INPUT [REPRO]. INPUT's lines (strings are '=' then %XX-escaped bytes):
//   S name                 cache NS
//   I parent child stamp tx ty tz qx qy qz qw static authority ends_moment result
//                          (result: tf_shm's '1' accepted, '0' refused, 'C' history cut/capacity)
//   C ends_moment          (clear)
//   Q lookup t s time | Q full t tt s st fixed | Q can t s time | Q canfull t tt s st fixed |
//   Q lct t s | Q frames
//   D ...                  (ignored)
//   R lo hi query path ANSWER
//     ANSWER: ok stamp tx ty tz qx qy qz qw | err Class text | ok | t ns | s text
// Prints "STAT kind.path checked racing failed stale" per class of read and a FAIL line per
// read of no prefix (the first 20 in full); REPRO gets the scenario and the failing reads.
// Exit status 0: every read matched; 1: some did not (or an insert's result differs); 2: bad
// input. A failed read is "stale" when it equals tf2's answer at a prefix
// before its window (before moments the reader had seen complete).
#include <tf2/buffer_core.h>
#include <tf2/exceptions.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string unesc(const std::string & tok)
{
  if (tok.empty() || tok[0] != '=') {
    std::cerr << "checker: not an escaped string: " << tok << "\n";
    std::exit(2);
  }
  std::string o;
  for (size_t i = 1; i < tok.size(); ++i) {
    if (tok[i] == '%' && i + 2 < tok.size()) {
      o.push_back(static_cast<char>(std::stoi(tok.substr(i + 1, 2), nullptr, 16)));
      i += 2;
    } else {
      o.push_back(tok[i]);
    }
  }
  return o;
}

std::string esc(const std::string & s)
{
  std::string o = "=";
  char buf[4];
  for (unsigned char c : s) {
    if (c > 32 && c < 127 && c != '%') {
      o.push_back(static_cast<char>(c));
    } else {
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      o += buf;
    }
  }
  return o;
}

std::vector<std::string> split(const std::string & line)
{
  std::vector<std::string> w;
  std::istringstream in(line);
  std::string t;
  while (in >> t) {
    w.push_back(t);
  }
  return w;
}

tf2::TimePoint tp(int64_t ns) {return tf2::TimePoint(std::chrono::nanoseconds(ns));}

struct Op
{
  bool clear = false;
  geometry_msgs::msg::TransformStamped msg;
  bool is_static = false;
  std::string authority;
  bool ends = false;
  char result = '-';
};

struct Query
{
  std::string kind;
  std::string t, s, fixed;
  int64_t tt = 0, st = 0;
};

enum class Kind { Ok, Err, CanOk, Time, Str };

struct Answer
{
  Kind kind = Kind::Err;
  int64_t stamp = 0;
  double v[7] = {0, 0, 0, 0, 0, 0, 0};
  std::string cls, text;
};

struct Read
{
  size_t lo, hi;
  size_t q;
  int path;
  Answer a;
  std::string line;
  bool matched = false;
};

Answer parse_answer(const std::vector<std::string> & w, size_t at)
{
  Answer a;
  const std::string & k = w.at(at);
  if (k == "ok" && w.size() == at + 1) {
    a.kind = Kind::CanOk;
  } else if (k == "ok") {
    a.kind = Kind::Ok;
    a.stamp = std::stoll(w.at(at + 1));
    for (int i = 0; i < 7; ++i) {
      a.v[i] = std::strtod(w.at(at + 2 + i).c_str(), nullptr);
    }
  } else if (k == "err") {
    a.kind = Kind::Err;
    a.cls = w.at(at + 1);
    a.text = unesc(w.at(at + 2));
  } else if (k == "t") {
    a.kind = Kind::Time;
    a.stamp = std::stoll(w.at(at + 1));
  } else if (k == "s") {
    a.kind = Kind::Str;
    a.text = unesc(w.at(at + 1));
  } else {
    std::cerr << "checker: bad answer " << k << "\n";
    std::exit(2);
  }
  return a;
}

// Texts on one line: newlines as \n.
std::string one_line(const std::string & s)
{
  std::string o;
  for (char c : s) {
    o += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return o;
}

std::string show(const Answer & a)
{
  std::ostringstream o;
  o.precision(17);
  switch (a.kind) {
    case Kind::Ok:
      o << "stamp " << a.stamp << " t [" << a.v[0] << ", " << a.v[1] << ", " << a.v[2] << "] q ["
        << a.v[3] << ", " << a.v[4] << ", " << a.v[5] << ", " << a.v[6] << "]";
      break;
    case Kind::Err: o << (a.cls.empty() ? "error" : a.cls) << " \"" << one_line(a.text) << "\""; break;
    case Kind::CanOk: o << "true"; break;
    case Kind::Time: o << "time " << a.stamp; break;
    case Kind::Str: o << "\"" << one_line(a.text) << "\""; break;
  }
  return o.str();
}

// As tests/differential.rs: 1e-9, relative above 1.
bool close(double got, double want)
{
  return std::fabs(got - want) <= 1e-9 * std::max(std::fabs(want), 1.0);
}

bool same(const Answer & got, const Answer & want, const std::string & kind)
{
  if (got.kind != want.kind) {
    return false;
  }
  switch (want.kind) {
    case Kind::Ok: {
        if (got.stamp != want.stamp) {
          return false;
        }
        for (int i = 0; i < 3; ++i) {
          if (!close(got.v[i], want.v[i])) {
            return false;
          }
        }
        bool plus = true, minus = true;
        for (int i = 3; i < 7; ++i) {
          plus = plus && close(got.v[i], want.v[i]);
          minus = minus && close(got.v[i], -want.v[i]);
        }
        return plus || minus;
      }
    case Kind::Err:
      // canTransform reports a text only.
      return (kind == "can" || kind == "canfull" || got.cls == want.cls) && got.text == want.text;
    case Kind::Time: return got.stamp == want.stamp;
    case Kind::Str: return got.text == want.text;
    case Kind::CanOk: return true;
  }
  return false;
}

Answer from_msg(const geometry_msgs::msg::TransformStamped & m)
{
  Answer a;
  a.kind = Kind::Ok;
  a.stamp = int64_t(m.header.stamp.sec) * 1000000000 + m.header.stamp.nanosec;
  const auto & t = m.transform.translation;
  const auto & q = m.transform.rotation;
  double v[7] = {t.x, t.y, t.z, q.x, q.y, q.z, q.w};
  std::copy(v, v + 7, a.v);
  return a;
}

template<class F>
Answer catching(F f)
{
  Answer a;
  a.kind = Kind::Err;
  try {
    return f();
  } catch (const tf2::BackwardExtrapolationException & e) {
    a.cls = "BackwardExtrapolationException", a.text = e.what();
  } catch (const tf2::ForwardExtrapolationException & e) {
    a.cls = "ForwardExtrapolationException", a.text = e.what();
  } catch (const tf2::NoDataForExtrapolationException & e) {
    a.cls = "NoDataForExtrapolationException", a.text = e.what();
  } catch (const tf2::ExtrapolationException & e) {
    a.cls = "ExtrapolationException", a.text = e.what();
  } catch (const tf2::ConnectivityException & e) {
    a.cls = "ConnectivityException", a.text = e.what();
  } catch (const tf2::LookupException & e) {
    a.cls = "LookupException", a.text = e.what();
  } catch (const tf2::InvalidArgumentException & e) {
    a.cls = "InvalidArgumentException", a.text = e.what();
  } catch (const tf2::TransformException & e) {
    a.cls = "TransformException", a.text = e.what();
  }
  return a;
}

Answer ask(const tf2::BufferCore & core, const Query & q)
{
  if (q.kind == "lookup") {
    return catching([&] {return from_msg(core.lookupTransform(q.t, q.s, tp(q.tt)));});
  }
  if (q.kind == "full") {
    return catching(
      [&] {return from_msg(core.lookupTransform(q.t, tp(q.tt), q.s, tp(q.st), q.fixed));});
  }
  Answer a;
  if (q.kind == "can" || q.kind == "canfull") {
    std::string err;
    bool ok = q.kind == "can" ?
      core.canTransform(q.t, q.s, tp(q.tt), &err) :
      core.canTransform(q.t, tp(q.tt), q.s, tp(q.st), q.fixed, &err);
    a.kind = ok ? Kind::CanOk : Kind::Err;
    a.text = err;
    return a;
  }
  if (q.kind == "lct") {
    // As tf2_py's BufferCore.get_latest_common_time: validated names, then the walk; a failed
    // walk raises tf2's base exception, whose code is TF2_CONNECTIVITY_ERROR.
    return catching(
      [&] {
        auto t = core._validateFrameId("get_latest_common_time", q.t);
        auto s = core._validateFrameId("get_latest_common_time", q.s);
        tf2::TimePoint time;
        std::string err;
        Answer r;
        if (core._getLatestCommonTime(t, s, time, &err) != tf2::TF2Error::TF2_NO_ERROR) {
          r.kind = Kind::Err;
          r.cls = "ConnectivityException";
          r.text = err;
          return r;
        }
        r.kind = Kind::Time;
        r.stamp = std::chrono::duration_cast<std::chrono::nanoseconds>(
          time.time_since_epoch()).count();
        return r;
      });
  }
  a.kind = Kind::Str;
  a.text = core.allFramesAsString();
  return a;
}

const char * PATHS[] = {"names", "pair", "view"};

std::string cls_of(const Query & q, int path)
{
  return q.kind == "lookup" ? q.kind + "." + PATHS[path] : q.kind;
}

std::string show_query(const Query & q)
{
  if (q.kind == "lookup" || q.kind == "can") {
    return q.kind + "(" + q.t + ", " + q.s + ", " + std::to_string(q.tt) + ")";
  }
  if (q.kind == "full" || q.kind == "canfull") {
    return q.kind + "(" + q.t + ", " + std::to_string(q.tt) + ", " + q.s + ", " +
           std::to_string(q.st) + ", " + q.fixed + ")";
  }
  if (q.kind == "lct") {
    return "lct(" + q.t + ", " + q.s + ")";
  }
  return "frames";
}

}  // namespace

int main(int argc, char ** argv)
{
  if (argc < 2) {
    std::cerr << "usage: checker INPUT [REPRO]\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::cerr << "checker: cannot open " << argv[1] << "\n";
    return 2;
  }
  std::string name, line;
  int64_t cache_ns = 10000000000;
  std::vector<Op> ops;
  std::vector<Query> queries;
  std::vector<Read> reads;
  std::vector<std::string> head;
  while (std::getline(in, line)) {
    auto w = split(line);
    if (w.empty()) {
      continue;
    }
    const std::string & k = w[0];
    if (k != "R" && k != "D") {
      head.push_back(line);
    }
    if (k == "S") {
      name = unesc(w.at(1));
    } else if (k == "cache") {
      cache_ns = std::stoll(w.at(1));
    } else if (k == "I") {
      Op op;
      op.msg.header.frame_id = unesc(w.at(1));
      op.msg.child_frame_id = unesc(w.at(2));
      int64_t stamp = std::stoll(w.at(3));
      op.msg.header.stamp.sec = static_cast<int32_t>(stamp / 1000000000);
      op.msg.header.stamp.nanosec = static_cast<uint32_t>(stamp % 1000000000);
      double v[7];
      for (int i = 0; i < 7; ++i) {
        v[i] = std::strtod(w.at(4 + i).c_str(), nullptr);
      }
      auto & t = op.msg.transform.translation;
      auto & r = op.msg.transform.rotation;
      t.x = v[0], t.y = v[1], t.z = v[2], r.x = v[3], r.y = v[4], r.z = v[5], r.w = v[6];
      op.is_static = w.at(11) == "1";
      op.authority = unesc(w.at(12));
      op.ends = w.at(13) == "1";
      op.result = w.at(14)[0];
      ops.push_back(op);
    } else if (k == "C") {
      Op op;
      op.clear = true;
      op.ends = w.at(1) == "1";
      ops.push_back(op);
    } else if (k == "Q") {
      Query q;
      q.kind = w.at(1);
      if (q.kind == "lookup" || q.kind == "can") {
        q.t = unesc(w.at(2)), q.s = unesc(w.at(3)), q.tt = std::stoll(w.at(4));
      } else if (q.kind == "full" || q.kind == "canfull") {
        q.t = unesc(w.at(2)), q.tt = std::stoll(w.at(3)), q.s = unesc(w.at(4));
        q.st = std::stoll(w.at(5)), q.fixed = unesc(w.at(6));
      } else if (q.kind == "lct") {
        q.t = unesc(w.at(2)), q.s = unesc(w.at(3));
      }
      queries.push_back(q);
    } else if (k == "R") {
      Read r;
      r.lo = std::stoull(w.at(1));
      r.hi = std::stoull(w.at(2));
      r.q = std::stoull(w.at(3));
      r.path = std::stoi(w.at(4));
      r.a = parse_answer(w, 5);
      r.line = line;
      if (r.q >= queries.size() || r.hi < r.lo || r.hi > ops.size()) {
        std::cerr << "checker: bad read " << line << "\n";
        return 2;
      }
      reads.push_back(std::move(r));
    }
  }
  const size_t n = ops.size();
  auto boundary = [&](size_t k) {return k == 0 || ops[k - 1].ends;};
  std::vector<size_t> order(reads.size());
  for (size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::stable_sort(
    order.begin(), order.end(), [&](size_t a, size_t b) {return reads[a].lo < reads[b].lo;});

  bool bad = false;
  std::ostringstream fails;
  auto apply = [&](tf2::BufferCore & core, size_t k, bool check) {
      const Op & op = ops[k];
      if (op.clear) {
        core.clear();
        return;
      }
      bool ok = core.setTransform(op.msg, op.authority, op.is_static);
      if (check && (op.result == 'C' || (op.result == '1') != ok)) {
        bad = true;
        fails << "WRITE op " << k << " (" << op.msg.header.frame_id << " -> " <<
          op.msg.child_frame_id << "): tf_shm " << op.result << ", tf2 " << ok << "\n";
      }
    };

  // One pass: each read is checked at the moment boundaries of its window, until one matches.
  {
    tf2::BufferCore core{tf2::Duration(std::chrono::nanoseconds(cache_ns))};
    std::vector<size_t> active;
    size_t next = 0;
    std::vector<std::optional<Answer>> memo(queries.size());
    for (size_t k = 0; k <= n; ++k) {
      if (boundary(k)) {
        while (next < order.size() && reads[order[next]].lo <= k) {
          active.push_back(order[next++]);
        }
        std::fill(memo.begin(), memo.end(), std::nullopt);
        std::vector<size_t> keep;
        for (size_t i : active) {
          Read & r = reads[i];
          if (r.hi < k) {
            continue;
          }
          if (!memo[r.q]) {
            memo[r.q] = ask(core, queries[r.q]);
          }
          if (same(r.a, *memo[r.q], queries[r.q].kind)) {
            r.matched = true;
          } else {
            keep.push_back(i);
          }
        }
        active.swap(keep);
      }
      if (k < n) {
        apply(core, k, true);
      }
    }
  }

  // The reads of no prefix: which prefixes, if any, they are tf2's answer at.
  std::vector<size_t> failed;
  for (size_t i = 0; i < reads.size(); ++i) {
    if (!reads[i].matched) {
      failed.push_back(i);
    }
  }
  std::map<size_t, std::vector<size_t>> matches;  // read -> prefixes (boundaries) it matches
  std::map<size_t, std::pair<Answer, Answer>> at_window;  // tf2 at lo and at hi
  if (!failed.empty()) {
    tf2::BufferCore core{tf2::Duration(std::chrono::nanoseconds(cache_ns))};
    std::vector<std::optional<Answer>> memo(queries.size());
    for (size_t k = 0; k <= n; ++k) {
      if (boundary(k)) {
        std::fill(memo.begin(), memo.end(), std::nullopt);
        for (size_t i : failed) {
          const Read & r = reads[i];
          if (!memo[r.q]) {
            memo[r.q] = ask(core, queries[r.q]);
          }
          const Answer & a = *memo[r.q];
          if (k == r.lo) {
            at_window[i].first = a;
          }
          if (k == r.hi) {
            at_window[i].second = a;
          }
          if (same(r.a, a, queries[r.q].kind)) {
            matches[i].push_back(k);
          }
        }
      }
      if (k < n) {
        apply(core, k, false);
      }
    }
  }

  // class -> checked, racing, failed, stale
  std::map<std::string, std::array<uint64_t, 4>> stat;
  for (const Read & r : reads) {
    auto & s = stat[cls_of(queries[r.q], r.path)];
    s[0]++;
    s[1] += r.hi > r.lo;
  }
  size_t shown = 0;
  std::vector<size_t> repro;
  for (size_t i : failed) {
    const Read & r = reads[i];
    const Query & q = queries[r.q];
    bad = true;
    repro.push_back(i);
    auto & s = stat[cls_of(q, r.path)];
    s[2]++;
    const auto & m = matches[i];
    // Stale: tf2's answer at an earlier prefix than the window (a kept answer or a link read
    // that outlived a change the reader had seen complete).
    auto before_lo = std::lower_bound(m.begin(), m.end(), r.lo);
    bool stale = before_lo != m.begin();
    size_t moments_before = 0;
    if (stale) {
      for (size_t k = *(before_lo - 1); k < r.lo; k = k + 1) {
        moments_before += ops[k].ends;
      }
    }
    s[3] += stale;
    if (shown++ < 20) {
      fails << "FAIL " << cls_of(q, r.path) << " " << show_query(q) << " window [" << r.lo <<
        ", " << r.hi << "] of " << n << (stale ? " (stale: tf2's answer " + std::to_string(moments_before) + " moments before the window)" : std::string()) <<
        "\n  tf_shm:     " << show(r.a) << "\n  tf2 at lo:  " << show(at_window[i].first) <<
        "\n  tf2 at hi:  " << show(at_window[i].second) << "\n  tf2 gives it at ";
      auto before = std::lower_bound(m.begin(), m.end(), r.lo);
      if (m.empty()) {
        fails << "no prefix";
      } else {
        fails << m.size() << " prefixes;";
        if (before != m.begin()) {
          fails << " the latest before the window: " << *(before - 1);
        }
        if (before != m.end()) {
          fails << " the first after it: " << *before;
        }
      }
      fails << "\n";
    }
  }
  for (const auto & [c, s] : stat) {
    std::cout << "STAT " << c << " " << s[0] << " " << s[1] << " " << s[2] << " " << s[3] << "\n";
  }
  std::cout << "SUMMARY " << esc(name) << ": " << reads.size() << " reads, " << failed.size() <<
    " of no prefix\n" << fails.str();
  if (bad && argc > 2) {
    std::ofstream out(argv[2]);
    for (const auto & h : head) {
      out << h << "\n";
    }
    for (size_t i : repro) {
      out << reads[i].line << "\n";
    }
  }
  return bad ? 1 : 0;
}
