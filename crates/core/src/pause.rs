//! Pauses in long computations, for drivers that share their thread.
//!
//! The protocol cores compute in long stretches between two messages (a
//! Ferret iteration's trees and LPN step take tens of milliseconds in a
//! browser). Natively they run on a task of their own beside the I/O, and
//! [`pause`] returns at once. A browser worker has one thread for the
//! engine and for the page's I/O, whose events (a TLS relay's frames) are
//! delivered only when the running future returns to the event loop: a
//! driver there installs a hook ([`install`]) that makes some pauses yield
//! to it, so the I/O moves on between stretches of work instead of after
//! them.
//!
//! The cores call [`pause`] where stopping is cheap and the work before
//! is short (once per Ferret tree); the hook decides whether to yield
//! (the browser's link yields when its relay is open and the event loop
//! last turned more than a few milliseconds ago).

use core::future::Future;
use core::pin::Pin;
use std::cell::RefCell;

/// What a hook returns to make a pause yield: ready once the driver's
/// event loop has turned.
pub type PauseFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Decides, at each [`pause`], whether to yield (`Some`) or go on (`None`).
pub type PauseHook = Box<dyn Fn() -> Option<PauseFuture>>;

thread_local! {
    static HOOK: RefCell<Option<PauseHook>> = const { RefCell::new(None) };
}

/// A point where a long computation may let its thread's other work run:
/// yields if this thread's hook says so, else returns at once.
pub async fn pause() {
    let wait = HOOK.with(|h| h.borrow().as_ref().and_then(|hook| hook()));
    if let Some(wait) = wait {
        wait.await;
    }
}

/// The hook stays installed on this thread until the guard is dropped
/// (which puts back the one it replaced).
#[must_use = "the hook is removed when the guard is dropped"]
pub struct Installed {
    previous: Option<PauseHook>,
}

/// Install `hook` for this thread's pauses.
pub fn install(hook: PauseHook) -> Installed {
    let previous = HOOK.with(|h| h.borrow_mut().replace(hook));
    Installed { previous }
}

impl Drop for Installed {
    fn drop(&mut self) {
        let previous = self.previous.take();
        HOOK.with(|h| *h.borrow_mut() = previous);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::{Context, Poll};

    /// A future pending once, then ready.
    struct Once(bool);
    impl Future for Once {
        type Output = ();
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if self.0 {
                Poll::Ready(())
            } else {
                self.0 = true;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        }
    }

    fn polls_until_ready(f: impl Future<Output = ()>) -> usize {
        let mut f = Box::pin(f);
        let waker = futures::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        let mut n = 1;
        while f.as_mut().poll(&mut cx).is_pending() {
            n += 1;
        }
        n
    }

    #[test]
    fn pauses_yield_only_where_a_hook_says() {
        assert_eq!(polls_until_ready(pause()), 1);
        let asked = Arc::new(AtomicUsize::new(0));
        {
            let a = asked.clone();
            let _hook = install(Box::new(move || {
                // Every other pause yields.
                a.fetch_add(1, Ordering::Relaxed)
                    .is_multiple_of(2)
                    .then(|| Box::pin(Once(false)) as PauseFuture)
            }));
            assert_eq!(polls_until_ready(pause()), 2);
            assert_eq!(polls_until_ready(pause()), 1);
        }
        assert_eq!(asked.load(Ordering::Relaxed), 2);
        // Removed with its guard.
        assert_eq!(polls_until_ready(pause()), 1);
        assert_eq!(asked.load(Ordering::Relaxed), 2);
    }
}
