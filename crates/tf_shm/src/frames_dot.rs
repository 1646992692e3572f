//! tf2's `BufferCore::_allFramesAsDot` (tf2_py's `_allFramesAsDot`, what `view_frames` of
//! ROS 1 drew): the frame tree as a Graphviz digraph, character for character.

use std::fmt::Write as _;

use crate::error::ArenaError;
use crate::sample::{FrameId, NO_FRAME};
use crate::store::FrameStore;
use crate::time::{display_time, to_sec};
use crate::walk::{frame_listing, listing_name, FrameListing};

/// tf2's `_allFramesAsDot(current_time)` (`now` in ns; 0 omits the ages and the time of
/// recording), in ROS 2 Jazzy's text:
///
/// ```text
/// digraph G {
/// "<parent>" -> "<child>"[label="Broadcaster: <authority>\nAverage rate: <%.3f> Hz\nMost recent transform: <%.6f s> ( <%.3f> sec old)\nBuffer length: <%.3f> sec\n"];
/// ...
/// edge [style=invis];
///  subgraph cluster_legend { style=bold; color=black; label ="view_frames Result";
/// "Recorded at time: <%.6f s>"[ shape=plaintext ] ;
///  }->"<root>";
/// }
/// ```
///
/// One edge per frame with data, in id order (rate and buffer length as in
/// [`crate::walk::all_frames_as_yaml`]); then a legend edge to every frame without cache (a
/// root) when `now != 0`, and to every frame whose newest parent is `NO_PARENT` (an empty
/// cache) always. With no frame known: `digraph G {\n"no tf data recieved"}` (tf2's spelling).
///
/// # Errors
/// Only an unreadable store.
pub fn all_frames_as_dot<S: FrameStore + ?Sized>(s: &S, now: i64) -> Result<String, ArenaError> {
    let mut out = String::from("digraph G {\n");
    if s.frame_count() <= 1 {
        out.push_str("\"no tf data recieved\"");
    }
    let name = |id: FrameId| listing_name(s, id);
    // Writing to a String cannot fail.
    for id in 1..s.frame_count() {
        let Some(FrameListing {
            parent,
            newest,
            span,
            rate,
            authority,
            ..
        }) = frame_listing(s, id)?
        else {
            continue;
        };
        let _ = write!(
            out,
            "\"{}\" -> \"{}\"[label=\"Broadcaster: {authority}\\nAverage rate: {rate:.3} Hz\\nMost recent transform: {} ",
            name(parent)?,
            name(id)?,
            display_time(newest),
        );
        if now != 0 {
            let _ = write!(out, "( {:.3} sec old)", to_sec(now.wrapping_sub(newest)));
        }
        let _ = writeln!(out, "\\nBuffer length: {:.3} sec\\n\"];", to_sec(span));
    }
    const LEGEND: &str = "edge [style=invis];\n subgraph cluster_legend { style=bold; color=black; label =\"view_frames Result\";\n";
    for id in 1..s.frame_count() {
        let Some((_, parent)) = s.latest_time_and_parent(id)? else {
            if now != 0 {
                let _ = writeln!(
                    out,
                    "{LEGEND}\"Recorded at time: {}\"[ shape=plaintext ] ;\n }}->\"{}\";",
                    display_time(now),
                    name(id)?
                );
            }
            continue;
        };
        if parent == NO_FRAME {
            out.push_str(LEGEND);
            if now != 0 {
                let _ = write!(
                    out,
                    "\"Recorded at time: {}\"[ shape=plaintext ] ;\n ",
                    display_time(now)
                );
            }
            let _ = writeln!(out, "}}->\"{}\";", name(id)?);
        }
    }
    out.push('}');
    Ok(out)
}
