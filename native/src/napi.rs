//! The few N-API functions this addon uses, declared by hand (no napi crate offline), plus thin
//! helpers. Node resolves these symbols when it loads the .node file, so no link flags on Linux.
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void, CStr};
use std::ptr;

#[repr(C)]
pub struct napi_env__ {
    _p: [u8; 0],
}
#[repr(C)]
pub struct napi_value__ {
    _p: [u8; 0],
}
#[repr(C)]
pub struct napi_callback_info__ {
    _p: [u8; 0],
}
pub type napi_env = *mut napi_env__;
pub type napi_value = *mut napi_value__;
pub type napi_callback_info = *mut napi_callback_info__;
pub type napi_status = i32;
pub type napi_callback = Option<unsafe extern "C" fn(napi_env, napi_callback_info) -> napi_value>;
pub type napi_finalize = Option<unsafe extern "C" fn(napi_env, *mut c_void, *mut c_void)>;
#[repr(C)]
pub struct napi_deferred__ {
    _p: [u8; 0],
}
#[repr(C)]
pub struct napi_async_work__ {
    _p: [u8; 0],
}
pub type napi_deferred = *mut napi_deferred__;
pub type napi_async_work = *mut napi_async_work__;
pub type napi_async_execute_callback = Option<unsafe extern "C" fn(napi_env, *mut c_void)>;
pub type napi_async_complete_callback = Option<unsafe extern "C" fn(napi_env, napi_status, *mut c_void)>;

const NAPI_OK: napi_status = 0;
const NAPI_UINT8_ARRAY: i32 = 1;
const NAPI_UINT32_ARRAY: i32 = 6;

extern "C" {
    fn napi_create_function(
        env: napi_env,
        utf8name: *const c_char,
        length: usize,
        cb: napi_callback,
        data: *mut c_void,
        result: *mut napi_value,
    ) -> napi_status;
    fn napi_set_named_property(env: napi_env, object: napi_value, utf8name: *const c_char, value: napi_value) -> napi_status;
    fn napi_get_cb_info(
        env: napi_env,
        cbinfo: napi_callback_info,
        argc: *mut usize,
        argv: *mut napi_value,
        this_arg: *mut napi_value,
        data: *mut *mut c_void,
    ) -> napi_status;
    fn napi_get_buffer_info(env: napi_env, value: napi_value, data: *mut *mut c_void, length: *mut usize) -> napi_status;
    fn napi_create_arraybuffer(env: napi_env, byte_length: usize, data: *mut *mut c_void, result: *mut napi_value)
        -> napi_status;
    fn napi_create_typedarray(
        env: napi_env,
        kind: i32,
        length: usize,
        arraybuffer: napi_value,
        byte_offset: usize,
        result: *mut napi_value,
    ) -> napi_status;
    fn napi_get_boolean(env: napi_env, value: bool, result: *mut napi_value) -> napi_status;
    fn napi_get_null(env: napi_env, result: *mut napi_value) -> napi_status;
    fn napi_get_undefined(env: napi_env, result: *mut napi_value) -> napi_status;
    fn napi_create_uint32(env: napi_env, value: u32, result: *mut napi_value) -> napi_status;
    fn napi_create_string_utf8(env: napi_env, s: *const c_char, length: usize, result: *mut napi_value) -> napi_status;
    fn napi_get_value_uint32(env: napi_env, value: napi_value, result: *mut u32) -> napi_status;
    fn napi_is_array(env: napi_env, value: napi_value, result: *mut bool) -> napi_status;
    fn napi_get_array_length(env: napi_env, value: napi_value, result: *mut u32) -> napi_status;
    fn napi_get_element(env: napi_env, object: napi_value, index: u32, result: *mut napi_value) -> napi_status;
    fn napi_throw_type_error(env: napi_env, code: *const c_char, msg: *const c_char) -> napi_status;
    fn napi_throw_error(env: napi_env, code: *const c_char, msg: *const c_char) -> napi_status;
    fn napi_create_external(
        env: napi_env,
        data: *mut c_void,
        finalize_cb: napi_finalize,
        finalize_hint: *mut c_void,
        result: *mut napi_value,
    ) -> napi_status;
    fn napi_get_value_external(env: napi_env, value: napi_value, result: *mut *mut c_void) -> napi_status;
    fn napi_create_object(env: napi_env, result: *mut napi_value) -> napi_status;
    fn napi_create_error(env: napi_env, code: napi_value, msg: napi_value, result: *mut napi_value) -> napi_status;
    fn napi_create_promise(env: napi_env, deferred: *mut napi_deferred, promise: *mut napi_value) -> napi_status;
    fn napi_resolve_deferred(env: napi_env, deferred: napi_deferred, resolution: napi_value) -> napi_status;
    fn napi_reject_deferred(env: napi_env, deferred: napi_deferred, rejection: napi_value) -> napi_status;
    fn napi_create_async_work(
        env: napi_env,
        async_resource: napi_value,
        async_resource_name: napi_value,
        execute: napi_async_execute_callback,
        complete: napi_async_complete_callback,
        data: *mut c_void,
        result: *mut napi_async_work,
    ) -> napi_status;
    fn napi_queue_async_work(env: napi_env, work: napi_async_work) -> napi_status;
    fn napi_delete_async_work(env: napi_env, work: napi_async_work) -> napi_status;
}

/// A Rust value owned by a JS external; `tag` guards against being handed some other external.
pub struct Owned<T> {
    tag: u64,
    pub value: T,
}

unsafe extern "C" fn drop_owned<T>(_env: napi_env, data: *mut c_void, _hint: *mut c_void) {
    drop(Box::from_raw(data as *mut Owned<T>));
}

/// A borrowed N-API environment, valid for the duration of one callback.
#[derive(Clone, Copy)]
pub struct Env(pub napi_env);

impl Env {
    /// The first N arguments; missing ones come back as `undefined` (N-API fills them in).
    pub unsafe fn args<const N: usize>(self, info: napi_callback_info) -> [napi_value; N] {
        let mut argv = [ptr::null_mut(); N];
        let mut argc = N;
        napi_get_cb_info(self.0, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), ptr::null_mut());
        argv
    }

    /// The bytes of any ArrayBufferView (Buffer, Uint8Array, ...) read in place, no copy.
    /// None when the value is not a view. The slice lives while JS cannot run (this call).
    pub unsafe fn bytes<'a>(self, v: napi_value) -> Option<&'a [u8]> {
        let mut data: *mut c_void = ptr::null_mut();
        let mut len = 0usize;
        if napi_get_buffer_info(self.0, v, &mut data, &mut len) != NAPI_OK {
            return None;
        }
        if len == 0 || data.is_null() {
            return Some(&[]);
        }
        Some(std::slice::from_raw_parts(data as *const u8, len))
    }

    /// Raw pointer and length of a view, for in-place mutation (bloomAdd).
    pub unsafe fn bytes_ptr(self, v: napi_value) -> Option<(*mut u8, usize)> {
        let mut data: *mut c_void = ptr::null_mut();
        let mut len = 0usize;
        if napi_get_buffer_info(self.0, v, &mut data, &mut len) != NAPI_OK || (len > 0 && data.is_null()) {
            return None;
        }
        Some((data as *mut u8, len))
    }

    /// Every element of a JS array as bytes; None if `v` is not an array or an element is not a view.
    pub unsafe fn byte_list<'a>(self, v: napi_value) -> Option<Vec<&'a [u8]>> {
        let n = self.array_len(v)?;
        let mut out = Vec::with_capacity(n as usize);
        for i in 0..n {
            out.push(self.bytes(self.element(v, i)?)?);
        }
        Some(out)
    }

    /// Like byte_list, but a non-view element becomes None instead of failing the whole list.
    pub unsafe fn byte_list_lenient<'a>(self, v: napi_value, n: u32) -> Vec<Option<&'a [u8]>> {
        (0..n).map(|i| self.element(v, i).and_then(|e| self.bytes(e))).collect()
    }

    pub unsafe fn array_len(self, v: napi_value) -> Option<u32> {
        let mut is = false;
        if napi_is_array(self.0, v, &mut is) != NAPI_OK || !is {
            return None;
        }
        let mut n = 0u32;
        if napi_get_array_length(self.0, v, &mut n) != NAPI_OK {
            return None;
        }
        Some(n)
    }

    pub unsafe fn element(self, arr: napi_value, i: u32) -> Option<napi_value> {
        let mut r = ptr::null_mut();
        (napi_get_element(self.0, arr, i, &mut r) == NAPI_OK).then_some(r)
    }

    pub unsafe fn u32(self, v: napi_value) -> Option<u32> {
        let mut r = 0u32;
        (napi_get_value_uint32(self.0, v, &mut r) == NAPI_OK).then_some(r)
    }

    /// A fresh zeroed Uint8Array of `len` bytes and a mutable view of its storage.
    pub unsafe fn new_u8<'a>(self, len: usize) -> Option<(napi_value, &'a mut [u8])> {
        let (ab, data) = self.new_arraybuffer(len)?;
        let mut r = ptr::null_mut();
        if napi_create_typedarray(self.0, NAPI_UINT8_ARRAY, len, ab, 0, &mut r) != NAPI_OK {
            return None;
        }
        Some((r, data))
    }

    /// A Uint8Array holding a copy of `bytes` (null on allocation failure, with an exception set).
    pub unsafe fn u8_from(self, bytes: &[u8]) -> napi_value {
        match self.new_u8(bytes.len()) {
            Some((v, out)) => {
                out.copy_from_slice(bytes);
                v
            }
            None => self.throw_error(c"native crypto: allocation failed"),
        }
    }

    pub unsafe fn u32_array_from(self, vals: &[u32]) -> napi_value {
        let Some((ab, data)) = self.new_arraybuffer(vals.len() * 4) else {
            return self.throw_error(c"native crypto: allocation failed");
        };
        for (chunk, v) in data.chunks_exact_mut(4).zip(vals) {
            chunk.copy_from_slice(&v.to_ne_bytes());
        }
        let mut r = ptr::null_mut();
        if napi_create_typedarray(self.0, NAPI_UINT32_ARRAY, vals.len(), ab, 0, &mut r) != NAPI_OK {
            return self.throw_error(c"native crypto: allocation failed");
        }
        r
    }

    unsafe fn new_arraybuffer<'a>(self, len: usize) -> Option<(napi_value, &'a mut [u8])> {
        let mut data: *mut c_void = ptr::null_mut();
        let mut ab = ptr::null_mut();
        if napi_create_arraybuffer(self.0, len, &mut data, &mut ab) != NAPI_OK {
            return None;
        }
        let slice: &mut [u8] = if len == 0 || data.is_null() {
            &mut []
        } else {
            std::slice::from_raw_parts_mut(data as *mut u8, len)
        };
        Some((ab, slice))
    }

    /// Move `value` into a JS external; it is dropped when the JS object is garbage-collected.
    pub unsafe fn external<T>(self, tag: u64, value: T) -> napi_value {
        let raw = Box::into_raw(Box::new(Owned { tag, value }));
        let mut r = ptr::null_mut();
        if napi_create_external(self.0, raw as *mut c_void, Some(drop_owned::<T>), ptr::null_mut(), &mut r) != NAPI_OK {
            drop(Box::from_raw(raw));
            return self.throw_error(c"native: could not create external");
        }
        r
    }

    /// The value behind an external made by `external` with the same tag. JS is single-threaded per
    /// isolate, so the mutable borrow is exclusive for the duration of the call.
    pub unsafe fn external_mut<'a, T>(self, tag: u64, v: napi_value) -> Option<&'a mut T> {
        let mut data: *mut c_void = ptr::null_mut();
        if napi_get_value_external(self.0, v, &mut data) != NAPI_OK || data.is_null() {
            return None;
        }
        let owned = &mut *(data as *mut Owned<T>);
        (owned.tag == tag).then_some(&mut owned.value)
    }

    /// A fresh empty object (null on failure).
    pub unsafe fn object(self) -> napi_value {
        let mut r = ptr::null_mut();
        napi_create_object(self.0, &mut r);
        r
    }

    /// An Error object (not thrown) with `msg` and, when given, `code`.
    pub unsafe fn error_value(self, code: Option<&str>, msg: &str) -> napi_value {
        let code = code.map_or(ptr::null_mut(), |c| self.string(c));
        let mut r = ptr::null_mut();
        napi_create_error(self.0, code, self.string(msg), &mut r);
        r
    }

    /// Runs `work` on libuv's thread pool, then `done` on the JS thread with its result; returns the promise
    /// `done` settles (Ok: resolved with the value it builds, Err: rejected with it). None (with nothing
    /// queued) when N-API refuses, e.g. during shutdown.
    pub unsafe fn spawn_promise<T: Send + 'static>(
        self,
        name: &str,
        work: T,
        run: fn(&mut T),
        done: unsafe fn(Env, T) -> Result<napi_value, napi_value>,
    ) -> Option<napi_value> {
        struct Task<T> {
            work: Option<T>,
            run: fn(&mut T),
            done: unsafe fn(Env, T) -> Result<napi_value, napi_value>,
            deferred: napi_deferred,
            handle: napi_async_work,
        }
        unsafe extern "C" fn execute<T>(_env: napi_env, data: *mut c_void) {
            let task = &mut *(data as *mut Task<T>);
            if let Some(w) = task.work.as_mut() {
                // A panic must not unwind into libuv; `done` still settles the promise.
                let run = task.run;
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(w)));
            }
        }
        unsafe extern "C" fn complete<T>(raw: napi_env, _status: napi_status, data: *mut c_void) {
            let task = Box::from_raw(data as *mut Task<T>);
            let env = Env(raw);
            let settled = match task.work {
                Some(w) => (task.done)(env, w),
                None => Err(env.error_value(None, "native: async work lost its input")),
            };
            match settled {
                Ok(v) => napi_resolve_deferred(raw, task.deferred, v),
                Err(e) => napi_reject_deferred(raw, task.deferred, e),
            };
            napi_delete_async_work(raw, task.handle);
        }
        let mut deferred = ptr::null_mut();
        let mut promise = ptr::null_mut();
        if napi_create_promise(self.0, &mut deferred, &mut promise) != NAPI_OK {
            return None;
        }
        let task = Box::into_raw(Box::new(Task {
            work: Some(work),
            run,
            done,
            deferred,
            handle: ptr::null_mut(),
        }));
        let mut handle = ptr::null_mut();
        let created = napi_create_async_work(
            self.0,
            ptr::null_mut(),
            self.string(name),
            Some(execute::<T>),
            Some(complete::<T>),
            task as *mut c_void,
            &mut handle,
        );
        if created != NAPI_OK {
            let task = Box::from_raw(task);
            napi_reject_deferred(
                self.0,
                deferred,
                self.error_value(None, "native: could not create async work"),
            );
            drop(task);
            return Some(promise);
        }
        (*task).handle = handle;
        if napi_queue_async_work(self.0, handle) != NAPI_OK {
            let task = Box::from_raw(task);
            napi_delete_async_work(self.0, handle);
            napi_reject_deferred(self.0, deferred, self.error_value(None, "native: could not queue async work"));
            drop(task);
        }
        Some(promise)
    }

    pub unsafe fn boolean(self, b: bool) -> napi_value {
        let mut r = ptr::null_mut();
        napi_get_boolean(self.0, b, &mut r);
        r
    }

    pub unsafe fn null(self) -> napi_value {
        let mut r = ptr::null_mut();
        napi_get_null(self.0, &mut r);
        r
    }

    pub unsafe fn undefined(self) -> napi_value {
        let mut r = ptr::null_mut();
        napi_get_undefined(self.0, &mut r);
        r
    }

    pub unsafe fn uint32(self, v: u32) -> napi_value {
        let mut r = ptr::null_mut();
        napi_create_uint32(self.0, v, &mut r);
        r
    }

    pub unsafe fn string(self, s: &str) -> napi_value {
        let mut r = ptr::null_mut();
        napi_create_string_utf8(self.0, s.as_ptr() as *const c_char, s.len(), &mut r);
        r
    }

    /// Throws a TypeError; returns the null napi_value a callback should hand back.
    pub unsafe fn throw_type_error(self, msg: &CStr) -> napi_value {
        napi_throw_type_error(self.0, ptr::null(), msg.as_ptr());
        ptr::null_mut()
    }

    pub unsafe fn throw_error(self, msg: &CStr) -> napi_value {
        napi_throw_error(self.0, ptr::null(), msg.as_ptr());
        ptr::null_mut()
    }

    /// exports[name] = value
    pub unsafe fn set(self, obj: napi_value, name: &CStr, value: napi_value) {
        napi_set_named_property(self.0, obj, name.as_ptr(), value);
    }

    /// exports[name] = function(cb)
    pub unsafe fn export_fn(
        self,
        obj: napi_value,
        name: &CStr,
        cb: unsafe extern "C" fn(napi_env, napi_callback_info) -> napi_value,
    ) {
        let mut f = ptr::null_mut();
        let bytes = name.to_bytes();
        if napi_create_function(self.0, name.as_ptr(), bytes.len(), Some(cb), ptr::null_mut(), &mut f) == NAPI_OK {
            self.set(obj, name, f);
        }
    }
}

/// Defines an N-API callback taking N arguments; a Rust panic becomes a JS Error instead of an abort.
#[macro_export]
macro_rules! js_fn {
    ($name:ident, $argc:literal, |$env:ident, $args:ident| $body:block) => {
        unsafe extern "C" fn $name(
            raw: $crate::napi::napi_env,
            info: $crate::napi::napi_callback_info,
        ) -> $crate::napi::napi_value {
            let $env = $crate::napi::Env(raw);
            let $args = $env.args::<$argc>(info);
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| $body)) {
                Ok(v) => v,
                Err(_) => $env.throw_error(c"native crypto: internal panic"),
            }
        }
    };
}
