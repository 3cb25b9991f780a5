//! Work sharing for the trie's hashing, in which the calling thread works too and never waits for a helper
//! that has not started. On a loaded machine a thread pool's workers may not get a core for milliseconds:
//! with rayon the caller sleeps until they have done the whole job, here it takes chunks itself and only
//! waits for chunks a helper is already hashing. On an idle machine the helpers take their share at once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};

/// A job as the helpers see it: chunk `i` is `run(ctx, i)`, chunks are claimed from `next` up to `n`.
#[derive(Clone, Copy)]
struct Job {
    run: unsafe fn(*const (), usize),
    ctx: *const (),
    next: *const AtomicUsize,
    n: usize,
}

// The pointers are only used while the owner of the job waits for `active` to drop to zero.
unsafe impl Send for Job {}

struct State {
    job: Option<Job>,
    generation: u64,
    active: usize,
}

struct Pool {
    state: Mutex<State>,
    wake: Condvar,
    idle: Condvar,
    /// One job at a time (the addon may be called from several JS threads); others run inline.
    busy: Mutex<()>,
    helpers: usize,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<&'static Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let pool: &'static Pool = Box::leak(Box::new(Pool {
            state: Mutex::new(State { job: None, generation: 0, active: 0 }),
            wake: Condvar::new(),
            idle: Condvar::new(),
            busy: Mutex::new(()),
            helpers: cores.saturating_sub(1),
        }));
        for _ in 0..pool.helpers {
            let spawned = std::thread::Builder::new().name("trie-hash".into()).spawn(move || helper(pool));
            if spawned.is_err() {
                break;
            }
        }
        pool
    })
}

fn helper(pool: &'static Pool) {
    let mut seen = 0u64;
    loop {
        let job = {
            let mut st = pool.state.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if let Some(job) = st.job.filter(|_| st.generation != seen) {
                    seen = st.generation;
                    st.active += 1;
                    break job;
                }
                st = pool.wake.wait(st).unwrap_or_else(|e| e.into_inner());
            }
        };
        // A panic in a chunk must not leave `active` counted (the owner would wait forever).
        let _ = std::panic::catch_unwind(|| unsafe { claim_chunks(&job) });
        let mut st = pool.state.lock().unwrap_or_else(|e| e.into_inner());
        st.active -= 1;
        if st.active == 0 {
            pool.idle.notify_all();
        }
    }
}

unsafe fn claim_chunks(job: &Job) {
    let next = &*job.next;
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= job.n {
            return;
        }
        (job.run)(job.ctx, i);
    }
}

unsafe fn call<F: Fn(usize) + Sync>(ctx: *const (), i: usize) {
    (*(ctx as *const F))(i)
}

/// Run `f(0..n)`, each index once, on the calling thread and whichever helpers join in time.
pub fn for_each_index<F: Fn(usize) + Sync>(n: usize, f: F) {
    let pool = pool();
    let guard = if n > 1 && pool.helpers > 0 { pool.busy.try_lock().ok() } else { None };
    if guard.is_none() {
        (0..n).for_each(f);
        return;
    }
    let next = AtomicUsize::new(0);
    let job = Job { run: call::<F>, ctx: &f as *const F as *const (), next: &next, n };
    {
        let mut st = pool.state.lock().unwrap_or_else(|e| e.into_inner());
        st.job = Some(job);
        st.generation += 1;
    }
    pool.wake.notify_all();
    // Withdrawn when this returns or unwinds: the job points into this frame.
    let _withdraw = Withdraw(pool);
    unsafe { claim_chunks(&job) };
}

/// Withdraws the published job on drop: a helper that wakes from then on finds nothing, and the owner waits
/// only for the helpers already inside it.
struct Withdraw(&'static Pool);

impl Drop for Withdraw {
    fn drop(&mut self) {
        let mut st = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
        st.job = None;
        while st.active > 0 {
            st = self.0.idle.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// `f(chunk index, chunk)` over `out` split in chunks of `size` items, shared as in `for_each_index`.
pub fn for_each_chunk_mut<T: Send, F: Fn(usize, &mut [T]) + Sync>(out: &mut [T], size: usize, f: F) {
    let len = out.len();
    let size = size.max(1);
    let base = SendPtr(out.as_mut_ptr());
    for_each_index(len.div_ceil(size), |c| {
        let start = c * size;
        let end = (start + size).min(len);
        // Each chunk index is claimed exactly once, so the slices never overlap.
        let chunk = unsafe { std::slice::from_raw_parts_mut(base.get().add(start), end - start) };
        f(c, chunk)
    });
}

struct SendPtr<T>(*mut T);
unsafe impl<T: Send> Sync for SendPtr<T> {}
impl<T> SendPtr<T> {
    fn get(&self) -> *mut T {
        self.0
    }
}
