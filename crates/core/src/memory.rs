//! An in-memory, bounded, bidirectional byte pipe for tests and in-process runs.

use futures::{AsyncRead, AsyncWrite};
use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

/// Bytes a direction buffers before the writer has to wait for the reader.
const CAPACITY: usize = 4 << 20;

#[derive(Default)]
struct Pipe {
    buf: VecDeque<u8>,
    closed: bool,
    reader: Option<Waker>,
    writer: Option<Waker>,
}

/// One end of an in-memory duplex pipe; dropping it closes both directions.
pub struct MemoryIo {
    rx: Arc<Mutex<Pipe>>,
    tx: Arc<Mutex<Pipe>>,
}

/// A connected pair of in-memory transports.
pub fn memory_duplex() -> (MemoryIo, MemoryIo) {
    let ab = Arc::new(Mutex::new(Pipe::default()));
    let ba = Arc::new(Mutex::new(Pipe::default()));
    (
        MemoryIo {
            rx: ba.clone(),
            tx: ab.clone(),
        },
        MemoryIo { rx: ab, tx: ba },
    )
}

impl AsyncRead for MemoryIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let mut p = self.rx.lock().expect("pipe lock");
        if p.buf.is_empty() {
            if p.closed {
                return Poll::Ready(Ok(0));
            }
            p.reader = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let n = out.len().min(p.buf.len());
        let (a, b) = p.buf.as_slices();
        let from_a = n.min(a.len());
        out[..from_a].copy_from_slice(&a[..from_a]);
        out[from_a..n].copy_from_slice(&b[..n - from_a]);
        p.buf.drain(..n);
        if let Some(w) = p.writer.take() {
            w.wake();
        }
        Poll::Ready(Ok(n))
    }
}

impl AsyncWrite for MemoryIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let mut p = self.tx.lock().expect("pipe lock");
        if p.closed {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        let room = CAPACITY - p.buf.len();
        if room == 0 {
            p.writer = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let n = room.min(data.len());
        p.buf.extend(&data[..n]);
        if let Some(w) = p.reader.take() {
            w.wake();
        }
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        close(&self.tx);
        Poll::Ready(Ok(()))
    }
}

fn close(pipe: &Arc<Mutex<Pipe>>) {
    let mut p = pipe.lock().expect("pipe lock");
    p.closed = true;
    if let Some(w) = p.reader.take() {
        w.wake();
    }
    if let Some(w) = p.writer.take() {
        w.wake();
    }
}

impl Drop for MemoryIo {
    fn drop(&mut self) {
        close(&self.tx);
        close(&self.rx);
    }
}
