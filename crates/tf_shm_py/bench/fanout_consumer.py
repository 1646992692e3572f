"""Fan-out benchmark, arm PB: one Python process reading TF through tf_shm.Buffer.

Opens the arena tf_shm_bridge serves (waiting for it) and looks up the given pairs at time 0 at
100 Hz with ``Buffer.lookup_transform`` (TransformStamped results, as arm PA's
``lookup_transform_core``). No subscription, no rclpy.

    fanout_consumer.py --pairs odom:link_50,... [--secs S] [--skip S0]

Prints one JSON line on stderr: lookups that succeeded and failed after the first S0 seconds.
"""

import argparse
import json
import sys
import time

import tf_shm


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", required=True)
    ap.add_argument("--secs", type=float, default=60.0)
    ap.add_argument("--skip", type=float, default=0.0)
    args = ap.parse_args()
    pairs = [tuple(p.split(":")) for p in args.pairs.split(",")]
    start = time.monotonic()
    end = start + args.secs
    buffer = tf_shm.Buffer(open_timeout=args.secs)
    ok = err = 0
    first_err = ""
    period = 0.01
    next_tick = time.monotonic() + period
    while True:
        now = time.monotonic()
        if now >= end:
            break
        if now < next_tick:
            time.sleep(next_tick - now)
            continue
        counting = now - start >= args.skip
        for target, source in pairs:
            try:
                buffer.lookup_transform(target, source, 0)
                good = True
            except tf_shm.TransformException as e:
                good = False
                if counting and not first_err:
                    first_err = str(e)
            if counting:
                ok, err = (ok + 1, err) if good else (ok, err + 1)
        next_tick += period
        if next_tick < now:
            next_tick = now + period
    sys.stderr.write(
        json.dumps({"arm": "PB", "lookups_ok": ok, "lookups_err": err, "first_err": first_err})
        + "\n"
    )


if __name__ == "__main__":
    main()
