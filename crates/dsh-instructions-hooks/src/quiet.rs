//! The quiet memo (decisions 0076, 0077): an event that can only answer "nothing
//! new", proved from stamps alone.
//!
//! At 1,000 known directories a "nothing new" event spends most of its time
//! decoding the session's side files and revisiting every known directory,
//! to conclude what the filesystem's stamps already say: nothing changed
//! (R-HOOK-6). After an event whose full path answered nothing and wrote
//! nothing to the log, the hook keeps `quiet.memo` beside the log:
//!
//! - the **keys** of such events: a digest of the build, the agent, the parsed event
//!   (its name, session, cwd and action with its touched paths, never the
//!   bytes, which carry ids that differ every time), the configuration and
//!   the home paths; each with the reason its event logged;
//! - the stamp of the **log** and of the session's **settings**: every
//!   append changes the log's size, so equal stamps mean the state the
//!   composition started from;
//! - the stamp of every **path** the composition depended on, recorded by a
//!   decorator around the event's provider factory ([`Recorder`]): a file
//!   read or probed and found (its own stamp, and its target's when it is a
//!   symbolic link); a path found absent (the nearest directory above it
//!   that exists, whose entries change when it appears); a listed
//!   directory; a root marker (the directory holding it).
//!
//! An event whose key is in the memo, with the log, the settings and every
//! path as stamped and no deferred touches waiting, answers nothing without
//! reading the log or any other side file: the stamps of the floor and no
//! more ([`quiet`]). Anything else takes the full path, which writes the
//! memo anew when it is quiet again ([`remember()`]): with its key added when
//! the memo held whole at the same state of the log, else with its key
//! alone — but what of the old stamps still holds is taken over, not looked
//! at again, and a probe batch the old memo stamped whole (the known
//! directories, asked at every event) costs only its paths under a
//! directory that changed (decision 0077).
//!
//! Why a stamp vouches (the racy-timestamp argument, as for the versions
//! and the directory stamps): a path is stamped after the composition,
//! and only when its last change (ctime) lies at least [`stamp::MARGIN`] before a
//! clock reading taken before the event began. Then it did not change while
//! the event read it, and any later change gives it another ctime. Otherwise
//! no memo is written and the next quiet event tries again.
//!
//! Outside its claim, so never answered from it: session starts and
//! compaction (they write the log), Gemini CLI (its `BeforeModel` carries
//! the history), events with deferred touches, marks-only events. A
//! missing, damaged or foreign memo is only the full path once: a damaged
//! one is removed and reported ([`dsh_session_log::side`]).

mod format;
mod hit;
mod key;
mod record;
mod remember;
mod stamp;

pub(crate) use hit::{MemoRead, damage, quiet};
pub(crate) use key::key;
pub(crate) use record::Recorder;
pub(crate) use remember::{Known, Start, remember};
#[cfg(test)]
pub(crate) use {key::TEST_OFF, stamp::TEST_MARGIN};

/// File name of the memo, beside `session.jsonl`.
pub(crate) const MEMO_FILE_NAME: &str = "quiet.memo";

#[cfg(test)]
mod tests;
