//! tf_shm_bridge: subscribes to /tf and /tf_static once (tf2_ros's QoS), writes every
//! transform into the shared arena through tf2's rules, and serves the arena to local
//! processes as rendezvous owner. r2r glue only: the behaviour lives in `tf_shm`.

mod clock;
mod frames_service;
mod ingest;
mod intake;
mod logging;
mod params;
mod ratelimit;
mod ready;
mod rendezvous_log;

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use clap::Parser;
use futures::StreamExt;
use r2r::tf2_msgs::msg::TFMessage;
use r2r::{ParameterValue, QosProfile};
use tf_shm::validate::TransformInput;
use tf_shm::{Owner, Serve};

use clock::{Jump, JumpDetector};
use ingest::Ingest;
use intake::Intake;
use params::{Cli, Param, Settings};
use ratelimit::RateLimiter;
use ready::Readiness;
use rendezvous_log::RendezvousLog;

fn main() -> ExitCode {
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
    match runtime.block_on(run(cli)) {
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

fn stamp_ns(t: &r2r::builtin_interfaces::msg::Time) -> i64 {
    i64::from(t.sec) * 1_000_000_000 + i64::from(t.nanosec)
}

/// Writes one message's transforms (waiting consumers are woken once, after the message);
/// logs frames seen for the first time.
fn ingest_message(owner: &mut Owner, ingest: &mut Ingest, msg: &TFMessage, is_static: bool) {
    let before = owner.view().frames_created();
    owner.writer().batch(|writer| {
        for t in &msg.transforms {
            let (p, q) = (&t.transform.translation, &t.transform.rotation);
            let input = TransformInput {
                frame_id: &t.header.frame_id,
                child_frame_id: &t.child_frame_id,
                stamp: stamp_ns(&t.header.stamp),
                translation: [p.x, p.y, p.z],
                rotation: [q.x, q.y, q.z, q.w],
            };
            ingest.apply(writer, &input, is_static);
        }
    });
    let view = owner.view();
    for id in before + 1..=view.frames_created() {
        if let Ok(info) = view.frame_info(id) {
            tracing::debug!(frame = %info.name, id, "new frame");
        }
    }
}

fn ros_now(clock: &std::sync::Mutex<r2r::Clock>) -> Option<i64> {
    let mut c = clock.lock().ok()?;
    c.get_now().ok().map(|d| d.as_nanos() as i64)
}

async fn run(cli: Cli) -> Result<(), String> {
    // Watched from the start: a SIGINT or SIGTERM while the arena is being created must stop
    // the bridge through the orderly path below (socket unlinked), not by the default action.
    use tokio::signal::unix::{signal, SignalKind};
    let mut sigint =
        signal(SignalKind::interrupt()).map_err(|e| format!("cannot watch SIGINT: {e}"))?;
    let mut sigterm =
        signal(SignalKind::terminate()).map_err(|e| format!("cannot watch SIGTERM: {e}"))?;
    let ctx = r2r::Context::create().map_err(|e| format!("cannot initialise ROS: {e}"))?;
    let mut node = r2r::Node::create(ctx, "tf_shm_bridge", "")
        .map_err(|e| format!("cannot create node tf_shm_bridge: {e}"))?;
    logging::init(&mut node)?;
    let ros = ros_params(&node);
    let settings = params::resolve(&cli, &ros)?;
    apply_log_level(&node, &settings)?;
    let use_sim_time = matches!(ros.get("use_sim_time"), Some(Param::Bool(true)));

    let rendezvous_log = RendezvousLog::default();
    let mut owner = open_arena(&settings, &rendezvous_log)?;
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
    let tf = node
        .subscribe_with_info::<TFMessage>(&settings.tf_topic, tf_qos)
        .map_err(|e| format!("cannot subscribe {}: {e}", settings.tf_topic))?;
    let tf_static = node
        .subscribe_with_info::<TFMessage>(&settings.tf_static_topic, static_qos)
        .map_err(|e| format!("cannot subscribe {}: {e}", settings.tf_static_topic))?;
    let frames = frames_service::create(&mut node)?;
    tokio::spawn(frames_service::serve(frames, owner.view().clone()));
    let clock = node.get_ros_clock();
    let mut intake = Intake::spawn(node, tf, tf_static, settings.tf_static_topic.clone())
        .map_err(|e| format!("cannot start the spin thread: {e}"))?;
    let mut readiness = Readiness::new(Instant::now());
    let mut ready = false;

    let mut tick = tokio::time::interval(Duration::from_millis(100));
    let mut jumps = JumpDetector::default();
    let mut ingest = Ingest::default();
    let mut lost_reported = 0u64;
    let mut sequence_note = false;
    let mut lost_log = RateLimiter::<()>::new(Duration::from_secs(10), 1, 1);
    let mut summary_at = Instant::now();
    loop {
        let check_clock;
        tokio::select! {
            Some(r) = intake.rx.next() => {
                ingest_message(&mut owner, &mut ingest, &r.msg, r.is_static);
                intake.done();
                readiness.received(r.is_static, Instant::now());
                check_clock = !r.is_static;
            }
            _ = tick.tick() => {
                check_clock = true;
                ingest.report_held_back();
                rendezvous_log.flush();
                let lost = intake.shared.lost();
                if lost > lost_reported {
                    owner.writer().set_messages_lost(lost);
                    // Once per period at most; the next line carries the running totals.
                    if lost_log.check((), Instant::now()).is_some() {
                        tracing::warn!(
                            "{} messages lost so far ({} since the last report): {} not \
                             delivered by the middleware (more waiting than the QoS depth, or \
                             replaced in a publisher's history), {} dropped because the writer \
                             fell more than {} messages behind",
                            lost,
                            lost - lost_reported,
                            intake.shared.lost_middleware.load(Ordering::Relaxed),
                            intake.shared.lost_queue.load(Ordering::Relaxed),
                            intake::QUEUE_CAPACITY
                        );
                        lost_reported = lost;
                    }
                }
                if !sequence_note && !intake.shared.sequence_numbers.load(Ordering::Relaxed) {
                    sequence_note = true;
                    tracing::info!(
                        "the middleware reports no publication sequence numbers: messages it \
                         drops cannot be counted (only those the bridge itself drops are)"
                    );
                }
            }
            _ = sigint.recv() => break,
            _ = sigterm.recv() => break,
        }
        if !ready {
            let publishers = intake.shared.static_publishers.load(Ordering::Relaxed);
            ready = readiness.check(
                Instant::now(),
                (publishers != usize::MAX).then_some(publishers),
            );
            if ready {
                intake.shared.graph_wanted.store(false, Ordering::Relaxed);
                owner.writer().declare_ready();
                tracing::info!("arena ready: consumers of an earlier arena switch to it now");
            }
        }
        if check_clock {
            if let Some(now) = ros_now(&clock) {
                match jumps.observe(now, use_sim_time) {
                    Some(Jump::Backward(_)) => {
                        tracing::warn!("Detected jump back in time. Clearing TF buffer.");
                        owner.writer().clear();
                    }
                    Some(Jump::SourceChanged) => {
                        tracing::warn!("Detected time source change. Clearing TF buffer.");
                        owner.writer().clear();
                    }
                    None => {}
                }
            }
        }
        if summary_at.elapsed() >= Duration::from_secs(60) {
            summary_at = Instant::now();
            let c = ingest.counts;
            tracing::info!(
                "{} frames; {} samples stored, {} duplicates, {} refused, {} with history cut, \
                 {} messages lost",
                owner.view().frames_created(),
                c.stored,
                c.duplicates,
                c.refused,
                c.history_cut,
                intake.shared.lost()
            );
        }
    }
    // Stop serving first, then release ownership and unlink (Owner's drop order).
    drop(owner);
    intake.stop();
    tracing::info!("stopped");
    Ok(())
}
