//! Settings shared by the client and server builders, and the codec [`Settings`] and
//! buffers they make.

use std::time::Duration;

use tickwire_codec::ws::connection::CONTROL_ROOM;
use tickwire_codec::ws::reader::READER_OVERHEAD;
use tickwire_codec::ws::{Config, Settings};

use crate::socket::{RecvMode, SocketOptions};

/// Settings shared by client and server builders.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub read_buffer_size: usize,
    pub write_buffer_size: usize,
    /// Server connections: the size their buffers start at (they grow on demand).
    pub initial_buffer_size: usize,
    pub max_frame_size: Option<usize>,
    pub max_message_size: Option<usize>,
    pub socket: SocketOptions,
    pub recv_mode: RecvMode,
    pub auto_pong: bool,
    pub fragment_size: usize,
    pub handshake_timeout: Duration,
    pub close_timeout: Duration,
    pub read_timeout: Option<Duration>,
    pub write_timeout: Option<Duration>,
    pub keepalive: Option<Duration>,
    pub dead_peer_timeout: Option<Duration>,
    /// permessage-deflate to offer (client) or accept (server).
    #[cfg(feature = "deflate")]
    pub deflate: Option<tickwire_codec::ws::deflate::DeflateConfig>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            read_buffer_size: 1 << 20,
            write_buffer_size: 1 << 20,
            initial_buffer_size: 4096,
            max_frame_size: None,
            max_message_size: None,
            socket: SocketOptions::default(),
            recv_mode: RecvMode::Sleep,
            auto_pong: true,
            fragment_size: 0,
            handshake_timeout: Duration::from_secs(10),
            close_timeout: Duration::from_secs(5),
            read_timeout: None,
            write_timeout: None,
            keepalive: None,
            dead_peer_timeout: None,
            #[cfg(feature = "deflate")]
            deflate: None,
        }
    }
}

impl Options {
    /// Read buffer capacity: the configured size, grown to hold `max_message_size`.
    pub fn read_capacity(&self) -> usize {
        let need = self
            .max_message_size
            .map_or(0, |m| m.saturating_add(READER_OVERHEAD));
        self.read_buffer_size.max(need).max(READER_OVERHEAD + 1024)
    }

    /// The read buffer.
    pub fn read_buffer(&self) -> Vec<u8> {
        vec![0u8; self.read_capacity()]
    }

    /// The write buffer: the configured size plus the room kept for control frames, so
    /// a message of `write_buffer_size` bytes on the wire always fits an empty buffer.
    pub fn write_buffer(&self) -> Vec<u8> {
        vec![0u8; self.write_capacity()]
    }

    /// Write buffer capacity (see [`write_buffer`](Self::write_buffer)).
    pub fn write_capacity(&self) -> usize {
        self.write_buffer_size.max(256) + CONTROL_ROOM
    }

    /// The codec connection's settings.
    pub fn settings(&self) -> Settings {
        Settings {
            limits: Config {
                max_frame_size: self.max_frame_size.unwrap_or(usize::MAX),
                // Unset: what the read buffer holds, said here rather than left to the
                // reader's lowering, since a compressed message's inflated size is held
                // to the configured limit itself (`FrameReader::max_decoded_size`).
                max_message_size: self
                    .max_message_size
                    .unwrap_or(self.read_capacity() - READER_OVERHEAD),
                allowed_rsv: 0,
            },
            auto_pong: self.auto_pong,
            fragment_size: self.fragment_size,
            handshake_timeout: Some(self.handshake_timeout),
            close_timeout: self.close_timeout,
            keepalive: self.keepalive,
            dead_peer_timeout: self.dead_peer_timeout,
            #[cfg(feature = "deflate")]
            deflate: self.deflate,
            ..Settings::default()
        }
    }
}
