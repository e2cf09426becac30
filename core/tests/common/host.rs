//! A minimal host event loop for the embedding tests: one thread that blocks in `poll(2)` on
//! an eventfd (the [`HostLoop`]'s requests for a run, and jobs sent from the test) and on the
//! input descriptors of the feeders it watches, as Node's and asyncio's loops do for real.

use std::{
    cell::RefCell,
    os::fd::{AsRawFd, FromRawFd, OwnedFd},
    sync::{Arc, mpsc},
    thread::JoinHandle,
};

use oxmcp::embed::{Feeder, HostLoop, ReadOutcome};

type Job = Box<dyn FnOnce(&HostLoop) + Send>;

thread_local! {
    static WATCHED: RefCell<Vec<Feeder>> = const { RefCell::new(Vec::new()) };
}

/// Makes the host thread read `feeder`'s input descriptor whenever it is readable. Call on
/// the host thread (from a job or a task of its loop).
pub fn watch(feeder: Feeder) {
    assert!(feeder.input_fd().is_some(), "the feeder owns no descriptor");
    WATCHED.with(|w| w.borrow_mut().push(feeder));
}

/// The host thread.
pub struct PollHost {
    host: HostLoop,
    jobs: mpsc::Sender<Option<Job>>,
    bell: Arc<OwnedFd>,
    thread: Option<JoinHandle<()>>,
}

impl PollHost {
    /// Starts the thread; tasks see `runtime` as theirs.
    pub fn start(runtime: tokio::runtime::Handle) -> PollHost {
        // SAFETY: eventfd returns a fresh descriptor (checked) that we own.
        let raw = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        assert!(raw >= 0, "eventfd");
        let bell = Arc::new(unsafe { OwnedFd::from_raw_fd(raw) });
        let (jobs, job_rx) = mpsc::channel::<Option<Job>>();
        let (ready_tx, ready_rx) = mpsc::channel();
        let thread_bell = bell.clone();
        let thread = std::thread::spawn(move || {
            let ring = thread_bell.clone();
            let host = HostLoop::new(runtime, move || ring_bell(&ring));
            ready_tx.send(host.clone()).unwrap();
            serve(&host, &thread_bell, job_rx);
            // Whatever is still watched is dropped here, on its thread.
            WATCHED.with(|w| w.borrow_mut().clear());
        });
        let host = ready_rx.recv().unwrap();
        PollHost {
            host,
            jobs,
            bell,
            thread: Some(thread),
        }
    }

    /// The loop (to spawn tasks on it from anywhere).
    pub fn host(&self) -> &HostLoop {
        &self.host
    }

    /// Runs `job` on the host thread.
    pub fn run(&self, job: impl FnOnce(&HostLoop) + Send + 'static) {
        self.jobs.send(Some(Box::new(job))).unwrap();
        ring_bell(&self.bell);
    }

    /// Stops the thread (dropping what it watches) and waits for it.
    pub fn stop(mut self) {
        self.finish();
    }

    fn finish(&mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = self.jobs.send(None);
            ring_bell(&self.bell);
            thread.join().unwrap();
        }
    }
}

impl Drop for PollHost {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.finish();
        }
    }
}

fn ring_bell(bell: &OwnedFd) {
    let one: u64 = 1;
    // SAFETY: writing 8 bytes from a local to an eventfd we own.
    unsafe { libc::write(bell.as_raw_fd(), (&one as *const u64).cast(), 8) };
}

/// The loop: wait for the bell or a watched descriptor, do what is due, run the host loop.
fn serve(host: &HostLoop, bell: &OwnedFd, jobs: mpsc::Receiver<Option<Job>>) {
    loop {
        let mut fds = vec![libc::pollfd {
            fd: bell.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }];
        WATCHED.with(|w| {
            for feeder in w.borrow().iter() {
                // A feeder whose backlog is full is not read until it drains (the bell rings
                // then, as the drain happens in a run of the loop).
                if feeder.wants_input()
                    && let Some(fd) = feeder.input_fd()
                {
                    fds.push(libc::pollfd {
                        fd: fd.as_raw_fd(),
                        events: libc::POLLIN,
                        revents: 0,
                    });
                }
            }
        });
        // SAFETY: `fds` is a valid array of pollfd of the given length.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if n < 0 {
            continue;
        }
        if fds[0].revents != 0 {
            let mut count = 0u64;
            // SAFETY: reading 8 bytes into a local from the eventfd.
            unsafe { libc::read(bell.as_raw_fd(), (&mut count as *mut u64).cast(), 8) };
            while let Ok(job) = jobs.try_recv() {
                match job {
                    Some(job) => job(host),
                    None => return,
                }
            }
        }
        let readable: Vec<i32> = fds[1..]
            .iter()
            .filter(|p| p.revents != 0)
            .map(|p| p.fd)
            .collect();
        WATCHED.with(|w| {
            let mut watched = w.borrow_mut();
            watched.retain_mut(|feeder| {
                let Some(fd) = feeder.input_fd().map(|fd| fd.as_raw_fd()) else {
                    return false;
                };
                if !readable.contains(&fd) {
                    return true;
                }
                !matches!(feeder.read_available(), Ok(ReadOutcome::Ended) | Err(_))
            });
        });
        host.run_ready();
    }
}
