//! Following the arena across bridge restarts: what a [`Buffer`](crate::Buffer) does by itself
//! once it has joined ([`crate::rendezvous`] only joins and serves).
//!
//! A thread waits for the owner's connection to hang up (`reattach`); the mapping the buffer
//! has keeps answering while it joins again. Once a new arena instance is joined, the buffer
//! answers from both arenas together ([`handover_store`], through [`BufferStore`]) until the
//! swap rule (`handover`) lets the new arena answer alone.

mod buffer_store;
mod handover;
pub mod handover_store;
mod reattach;

pub use buffer_store::{BufferMoment, BufferStore};
pub(crate) use reattach::Follower;
