//! tf_shm_bridge: subscribes to /tf and /tf_static once (tf2_ros's QoS), writes every
//! transform into the shared arena through tf2's rules, and serves the arena to local
//! processes as rendezvous owner. r2r glue only: the behaviour lives in `tf_shm`.

#[cfg(test)]
mod cdr_against_rmw;
mod clock;
mod dds_profile;
mod frames_service;
mod ingest;
mod intake;
mod logging;
mod params;
mod ratelimit;
mod ready;
mod rendezvous_log;
mod startup;
mod static_publishers;

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use r2r::{MessageInfo, ParameterValue, QosProfile};
use tf_shm::{Owner, Serve};

use clock::{Jump, JumpDetector};
use ingest::Ingest;
use intake::{Gaps, Losses};
use params::{Cli, Param, Settings};
use ratelimit::RateLimiter;
use ready::Readiness;
use rendezvous_log::RendezvousLog;
use startup::{Phase, Timeline};
use static_publishers::{gid16, Publisher, StaticPublishers};

fn main() -> ExitCode {
    let timeline = Timeline::start();
    let argv: Vec<String> = std::env::args().collect();
    let cli = Cli::parse_from(params::split_args(&argv));
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("tf_shm_bridge: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli, timeline)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // ROS start-up errors come before logging exists.
            if logging::ready() {
                tracing::error!("{e}");
            } else {
                eprintln!("tf_shm_bridge: {e}");
            }
            ExitCode::FAILURE
        }
    }
}

/// The `log_level` parameter, when given, sets the node logger's level as
/// `--ros-args --log-level NODE:=LEVEL` would.
fn apply_log_level(node: &r2r::Node, settings: &Settings) -> Result<(), String> {
    if let Some(level) = settings.log_level {
        logging::set_level(node.logger(), level)?;
    }
    tracing::debug!("logger {}; settings {settings:?}", node.logger());
    Ok(())
}

/// ROS parameters given at start (`--ros-args -p`, `--params-file`).
fn ros_params(node: &r2r::Node) -> HashMap<String, Param> {
    let params = node.params.lock().unwrap_or_else(|p| p.into_inner());
    params
        .iter()
        .filter_map(|(k, p)| {
            let v = match &p.value {
                ParameterValue::Bool(b) => Param::Bool(*b),
                ParameterValue::Integer(i) => Param::Int(*i),
                ParameterValue::Double(d) => Param::Double(*d),
                ParameterValue::String(s) => Param::Str(s.clone()),
                _ => return None,
            };
            Some((k.clone(), v))
        })
        .collect()
}

fn open_arena(s: &Settings, log: &RendezvousLog) -> Result<Owner, String> {
    let mut open = Serve::new(s.arena.clone())
        .require_create(true)
        .participant_name("tf_shm_bridge")
        .defer_ready(true)
        .on_event(log.hook());
    if let Some(name) = &s.arena_name {
        open = open.name(name);
    }
    if let Some(domain) = s.domain {
        open = open.domain(domain);
    }
    if let Some(gid) = s.allowed_group {
        open = open.allow_group(gid);
    }
    open.serve().map_err(|e| e.to_string())
}

/// What the subscriptions' callbacks (on the middleware's threads, as messages arrive) and the
/// intake thread's ticks share.
struct Shared {
    /// Taken when the bridge stops (after the callbacks are stopped).
    owner: Option<Owner>,
    ingest: Ingest,
    losses: Losses,
    tf_gaps: Gaps,
    static_gaps: Gaps,
    readiness: Readiness,
    statics: StaticPublishers,
    timeline: Timeline,
    jumps: JumpDetector,
    clock: Arc<Mutex<r2r::Clock>>,
    use_sim_time: bool,
}

impl Shared {
    fn owner(&mut self) -> &mut Owner {
        self.owner
            .as_mut()
            .expect("the arena is released only after the callbacks stop")
    }

    /// Marks a phase; logs the timeline once both topics have delivered.
    fn mark(&mut self, phase: Phase) {
        if self.timeline.mark(phase)
            && self.timeline.has(Phase::FirstTf)
            && self.timeline.has(Phase::FirstStatic)
        {
            tracing::info!("start-up: {}", self.timeline.line());
        }
    }

    /// One message taken from a subscription: counted, and written — a `/tf` one after the
    /// clock was checked for a jump, so that the clear a jump back makes (tf2_ros's listener
    /// clears when its clock jumps, before it takes the messages stamped after it) does not
    /// take the message that came after the jump with it.
    fn on_message(&mut self, bytes: &[u8], info: &MessageInfo, is_static: bool) {
        let gaps = if is_static {
            &mut self.static_gaps
        } else {
            &mut self.tf_gaps
        };
        self.losses.observe(gaps, info);
        if is_static {
            self.statics.heard(info.publisher_gid);
        } else if self.owner.is_some() {
            self.check_clock();
        }
        let Some(owner) = self.owner.as_mut() else {
            return;
        };
        if ingest_message(owner, &mut self.ingest, &mut self.losses, bytes, is_static) {
            self.readiness.received(is_static, Instant::now());
            self.mark(if is_static {
                Phase::FirstStatic
            } else {
                Phase::FirstTf
            });
        }
    }

    /// A backward jump of the ROS clock (or a change of its source) clears the dynamic
    /// history, as tf2_ros's listener does.
    fn check_clock(&mut self) {
        let Some(t) = ros_now(&self.clock) else {
            return;
        };
        let what = match self.jumps.observe(t, self.use_sim_time) {
            Some(Jump::Backward(_)) => "Detected jump back in time. Clearing TF buffer.",
            Some(Jump::SourceChanged) => "Detected time source change. Clearing TF buffer.",
            None => return,
        };
        tracing::warn!("{what}");
        self.owner().writer().clear();
    }
}

fn lock(shared: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(|p| p.into_inner())
}

/// Everything the intake thread owns: the node (its services and graph queries), the shared
/// state the subscriptions write through, and the bookkeeping around them.
struct Intake {
    node: r2r::Node,
    shared: Arc<Mutex<Shared>>,
    settings: Settings,
    rendezvous_log: RendezvousLog,
}

/// How often the periodic work runs (loss and refusal reports, readiness, the clock).
const TICK: Duration = Duration::from_millis(100);
/// How often the graph is asked for the static topic's publishers until ready (a graph query
/// costs more than taking a message).
const GRAPH_PERIOD: Duration = Duration::from_millis(100);
/// How often, once ready, the graph's static publishers are compared with those heard from.
const STATICS_PERIOD: Duration = Duration::from_secs(1);
/// How often unheard static publishers are said again while they last.
const UNHEARD_REPEAT: Duration = Duration::from_secs(60);

/// Writes one message's transforms (waiting consumers are woken once, after the message);
/// logs frames seen for the first time. A message that is not a TFMessage is counted and said.
fn ingest_message(
    owner: &mut Owner,
    ingest: &mut Ingest,
    losses: &mut Losses,
    bytes: &[u8],
    is_static: bool,
) -> bool {
    let transforms = match tf_shm::cdr::decode(bytes) {
        Ok(t) => t,
        Err(e) => {
            losses.malformed += 1;
            ingest.report_malformed(&e);
            return false;
        }
    };
    let before = owner.view().frames_created();
    owner.writer().batch(|writer| {
        for input in transforms {
            ingest.apply(writer, &input, is_static);
        }
    });
    let view = owner.view();
    for id in before + 1..=view.frames_created() {
        if let Ok(info) = view.frame_info(id) {
            tracing::debug!(frame = %info.name, id, "new frame");
        }
    }
    true
}

fn ros_now(clock: &Mutex<r2r::Clock>) -> Option<i64> {
    let mut c = clock.lock().ok()?;
    c.get_now().ok().map(|d| d.as_nanos() as i64)
}

impl Intake {
    /// Spins the node (services, graph, /clock) and does the periodic work until `stop`; then
    /// stops the subscriptions' callbacks, stops serving and releases the arena.
    fn run(mut self, stop: &AtomicBool) {
        let mut ready = false;
        let mut lost_reported = 0u64;
        let mut sequence_note = false;
        let mut lost_log = RateLimiter::<()>::new(Duration::from_secs(10), 1, 1);
        let mut summary_at = Instant::now();
        let mut next_tick = Instant::now() + TICK;
        let mut graph_at = Instant::now() - GRAPH_PERIOD;
        let mut startup_graph_at = Instant::now() - STARTUP_GRAPH_PERIOD;
        let mut unheard_said = UnheardSaid::default();
        while !stop.load(Ordering::Relaxed) {
            let mut wait = next_tick.saturating_duration_since(Instant::now());
            let watching = !ready && {
                let s = lock(&self.shared);
                !s.timeline.has(Phase::TfPublisherSeen) && !s.timeline.has(Phase::FirstTf)
            };
            if watching {
                // Start-up: the graph is watched for the first /tf publisher, at most once per
                // period (until it is seen, a message came or the arena is ready: a graph query
                // costs more than taking a message).
                wait = wait.min(STARTUP_GRAPH_PERIOD);
                if startup_graph_at.elapsed() >= STARTUP_GRAPH_PERIOD {
                    startup_graph_at = Instant::now();
                    let topic = &self.settings.tf_topic;
                    let seen = self.node.get_publishers_info_by_topic(topic, false);
                    if seen.is_ok_and(|p| !p.is_empty()) {
                        lock(&self.shared).timeline.mark(Phase::TfPublisherSeen);
                    }
                }
            }
            // The subscriptions are in no wait set: their messages are written on the
            // middleware's threads as they arrive. This waits on the node's services (and
            // /clock) only.
            self.node.spin_once(wait);
            let now = Instant::now();
            let mut s = lock(&self.shared);
            if now >= next_tick {
                next_tick = now + TICK;
                s.check_clock();
                s.ingest.report_held_back();
                self.rendezvous_log.flush();
                let lost = s.losses.total();
                if lost > lost_reported {
                    s.owner().writer().set_messages_lost(lost);
                    // Once per period at most; the next line carries the running totals.
                    if lost_log.check((), now).is_some() {
                        tracing::warn!(
                            "{} messages lost so far ({} since the last report): {} not \
                             delivered by the middleware (more waiting than the QoS depth, or \
                             replaced in a publisher's history), {} malformed (not a TFMessage \
                             in XCDR1 or XCDR2)",
                            lost,
                            lost - lost_reported,
                            s.losses.middleware,
                            s.losses.malformed,
                        );
                        lost_reported = lost;
                    }
                }
                if !sequence_note && !s.losses.sequence_numbers {
                    sequence_note = true;
                    tracing::info!(
                        "the middleware reports no publication sequence numbers: messages it \
                         drops cannot be counted (only malformed ones are)"
                    );
                }
            }
            let period = if ready { STATICS_PERIOD } else { GRAPH_PERIOD };
            if now.duration_since(graph_at) >= period {
                graph_at = now;
                let topic = &self.settings.tf_static_topic;
                if let Ok(p) = self.node.get_publishers_info_by_topic(topic, false) {
                    let graph = p
                        .iter()
                        .map(|e| Publisher {
                            gid: gid16(&e.endpoint_gid),
                            node: format!(
                                "{}/{}",
                                e.node_namespace.trim_end_matches('/'),
                                e.node_name
                            ),
                            durability: format!("{:?}", e.qos_profile.durability),
                            can_latch: matches!(
                                e.qos_profile.durability,
                                r2r::qos::DurabilityPolicy::TransientLocal
                            ) && matches!(
                                e.qos_profile.reliability,
                                r2r::qos::ReliabilityPolicy::Reliable
                            ),
                        })
                        .collect();
                    let unheard = s.statics.update(now, graph);
                    report_unheard(&mut s, topic, &unheard, &mut unheard_said, now);
                }
            }
            if !ready {
                let statics = s.statics.evidence(now);
                ready = s.readiness.check(now, statics);
                if ready {
                    s.owner().writer().declare_ready();
                    tracing::info!("arena ready: consumers of an earlier arena switch to it now");
                }
            }
            if now.duration_since(summary_at) >= Duration::from_secs(60) {
                summary_at = now;
                let c = s.ingest.counts;
                let frames = s.owner().view().frames_created();
                tracing::info!(
                    "{} frames; {} samples stored, {} duplicates, {} refused, {} with history \
                     cut, {} messages lost",
                    frames,
                    c.stored,
                    c.duplicates,
                    c.refused,
                    c.history_cut,
                    s.losses.total()
                );
            }
        }
        // No callback writes after this; then stop serving, release ownership and unlink
        // (Owner's drop order); the node goes after the arena.
        self.node.stop_on_message();
        let owner = lock(&self.shared).owner.take();
        drop(owner);
    }
}

/// What [`report_unheard`] last reported.
#[derive(Default)]
struct UnheardSaid {
    /// The unheard static publishers counted in the header.
    gids: Vec<[u8; 16]>,
    /// When they were last said at warn (`None`: not since the set last changed to empty).
    at: Option<Instant>,
}

/// Counts the unheard static publishers in the arena's header and says them at warn when
/// their set changes, and again every [`UNHEARD_REPEAT`] while there are any.
fn report_unheard(
    s: &mut Shared,
    topic: &str,
    unheard: &[Publisher],
    said: &mut UnheardSaid,
    now: Instant,
) {
    let gids: Vec<[u8; 16]> = unheard.iter().map(|p| p.gid).collect();
    let changed = gids != said.gids;
    if changed {
        s.owner()
            .writer()
            .set_static_publishers_unheard(gids.len() as u64);
    }
    let due = said
        .at
        .is_none_or(|t| now.duration_since(t) >= UNHEARD_REPEAT);
    if !unheard.is_empty() && (changed || due) {
        let list: Vec<String> = unheard
            .iter()
            .map(|p| {
                let qos = if p.can_latch {
                    ""
                } else {
                    ": its QoS cannot match this subscription"
                };
                format!("{} (durability {}{qos})", p.node, p.durability)
            })
            .collect();
        tracing::warn!(
            "{} {topic} publisher(s) in the ROS graph delivered nothing in {} s or more: {}; \
             whatever they sent is not in the arena (a volatile or best-effort publisher cannot \
             match this transient-local, reliable subscription: fix its QoS; otherwise DDS did \
             not deliver its latched sample: restart the bridge or the publisher; or the \
             publisher has sent nothing yet)",
            unheard.len(),
            static_publishers::UNHEARD_AFTER.as_secs(),
            list.join(", ")
        );
        said.at = Some(now);
    }
    if unheard.is_empty() && changed {
        tracing::info!("every {topic} publisher in the ROS graph has delivered");
        said.at = None;
    }
    said.gids = gids;
}

/// How often the graph is asked for /tf's publishers at start-up, until one is seen (the
/// start-up timeline's discovery phase).
const STARTUP_GRAPH_PERIOD: Duration = Duration::from_millis(10);

/// Gives the bridge's DDS participant its own profile (`dds_profile`), before rcl creates it.
fn dds_profile(cli: &Cli) -> Result<dds_profile::Applied, String> {
    let ids = match &cli.dds_participant_ids {
        Some(s) => dds_profile::parse_ids(s)?,
        None => Some(dds_profile::DEFAULT_IDS),
    };
    // The runtime dir as the arena's rendezvous resolves it (name and domain do not matter).
    let runtime_dir = match Serve::new(Default::default())
        .name("default")
        .domain(0)
        .location()
    {
        Ok(l) => l.runtime_dir,
        Err(e) => {
            return Ok(dds_profile::Applied::Skipped(format!(
                "no runtime dir ({e})"
            )))
        }
    };
    let applied = dds_profile::apply(ids, &runtime_dir, &dds_profile::ProcessEnv)?;
    if let dds_profile::Applied::Profile { path, .. } = &applied {
        // Read by Fast DDS in this process only. The process has one thread here (tokio's
        // current-thread runtime and its signal watch start none), so nothing reads the
        // environment while it changes.
        std::env::set_var("FASTRTPS_DEFAULT_PROFILES_FILE", path);
    }
    Ok(applied)
}

/// The registered type of both topics (a raw subscription names its type).
const TF_MESSAGE_TYPE: &str = "tf2_msgs/msg/TFMessage";

async fn run(cli: Cli, mut timeline: Timeline) -> Result<(), String> {
    // Watched from the start: a SIGINT or SIGTERM while the arena is being created must stop
    // the bridge through the orderly path below (socket unlinked), not by the default action.
    use tokio::signal::unix::{signal, SignalKind};
    let mut sigint =
        signal(SignalKind::interrupt()).map_err(|e| format!("cannot watch SIGINT: {e}"))?;
    let mut sigterm =
        signal(SignalKind::terminate()).map_err(|e| format!("cannot watch SIGTERM: {e}"))?;
    let dds = dds_profile(&cli)?;
    let ctx = r2r::Context::create().map_err(|e| format!("cannot initialise ROS: {e}"))?;
    timeline.mark(Phase::Context);
    let mut node = r2r::Node::create(ctx, "tf_shm_bridge", "")
        .map_err(|e| format!("cannot create node tf_shm_bridge: {e}"))?;
    timeline.mark(Phase::Node);
    dds.participant_created();
    logging::init(&mut node)?;
    let ros = ros_params(&node);
    let settings = params::resolve(&cli, &ros)?;
    apply_log_level(&node, &settings)?;
    tracing::info!("{}", dds.describe());
    if ros.contains_key("dds_participant_ids") {
        tracing::warn!(
            "parameter dds_participant_ids has no effect: the DDS participant exists before \
             parameters are read; give --dds-participant-ids on the command line"
        );
    }
    let use_sim_time = matches!(ros.get("use_sim_time"), Some(Param::Bool(true)));

    let rendezvous_log = RendezvousLog::default();
    let owner = open_arena(&settings, &rendezvous_log)?;
    timeline.mark(Phase::Arena);
    if let Err(e) = dds.remember() {
        tracing::warn!("{e}: the next bridge may take this one's DDS participant id");
    }
    let stats = owner.view().stats();
    tracing::info!(
        "serving arena {} ({} MiB, {} frames max, cache time {} s, pool {} MiB) on {}",
        owner.location().name,
        stats.arena_size >> 20,
        stats.max_frames,
        stats.cache_time_ns as f64 / 1e9,
        stats.pool_size >> 20,
        owner.location().sock_path.display(),
    );
    tracing::info!(
        "domain {}; subscribing {} (keep-last {}, reliable, volatile) and {} (keep-last {}, \
         reliable, transient-local){}",
        owner.location().domain,
        settings.tf_topic,
        settings.tf_depth,
        settings.tf_static_topic,
        settings.tf_static_depth,
        if use_sim_time { "; use_sim_time" } else { "" }
    );

    let (param_service, _param_events) = node
        .make_parameter_handler()
        .map_err(|e| format!("cannot create parameter services: {e}"))?;
    tokio::spawn(param_service);
    let tf_qos = QosProfile::default()
        .keep_last(settings.tf_depth as usize)
        .reliable()
        .volatile();
    let static_qos = QosProfile::default()
        .keep_last(settings.tf_static_depth as usize)
        .reliable()
        .transient_local();
    let frames = frames_service::create(&mut node)?;
    tokio::spawn(frames_service::serve(frames, owner.view().clone()));
    let shared = Arc::new(Mutex::new(Shared {
        owner: Some(owner),
        ingest: Ingest::default(),
        losses: Losses::default(),
        tf_gaps: Gaps::default(),
        static_gaps: Gaps::default(),
        readiness: Readiness::new(Instant::now()),
        statics: StaticPublishers::default(),
        timeline,
        jumps: JumpDetector::default(),
        clock: node.get_ros_clock(),
        use_sim_time,
    }));
    for (topic, qos, is_static) in [
        (&settings.tf_topic, tf_qos, false),
        (&settings.tf_static_topic, static_qos, true),
    ] {
        let shared = shared.clone();
        node.subscribe_raw_on_message(topic, TF_MESSAGE_TYPE, qos, move |bytes, info| {
            lock(&shared).on_message(bytes, &info, is_static)
        })
        .map_err(|e| format!("cannot subscribe {topic}: {e}"))?;
    }
    lock(&shared).timeline.mark(Phase::Subscribed);
    let intake = Intake {
        node,
        shared,
        settings,
        rendezvous_log,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let (done_tx, done_rx) = futures::channel::oneshot::channel::<()>();
    let thread = {
        let stop = stop.clone();
        std::thread::Builder::new()
            .name("tf_shm-intake".into())
            .spawn(move || {
                intake.run(&stop);
                let _ = done_tx.send(());
            })
            .map_err(|e| format!("cannot start the intake thread: {e}"))?
    };
    tokio::select! {
        _ = sigint.recv() => {}
        _ = sigterm.recv() => {}
        _ = done_rx => {}
    }
    stop.store(true, Ordering::Relaxed);
    thread
        .join()
        .map_err(|_| "the intake thread panicked".to_string())?;
    tracing::info!("stopped");
    Ok(())
}
