//! FrameReader in either role, with limits, buffer size and chunking chosen by the input's
//! first bytes (see `tickwire_fuzz::Setup`). Beyond "no panic", it checks that every
//! message is within the limits, text is valid UTF-8, control payloads are at most 125
//! bytes, feeding in chunks, byte by byte or all at once gives the same messages and the
//! same ending, the reader never uses bytes it was not given (runs over differently
//! pre-filled storage agree) and never stalls, and that re-encoding the messages with
//! FrameWriter parses back to the same messages.
use crate::{Setup, check_reader};

/// One input of the fuzz target `ws_frame_reader` (see the module docs).
pub fn run(input: &[u8]) {
    let Some((setup, data)) = Setup::decode(input) else {
        return;
    };
    check_reader(&setup, data);
}
