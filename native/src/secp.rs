//! libsecp256k1 (system shared library) declared by hand: only what verify, recover and sign need.
//! One global context created (and randomized, a side-channel blinding for signing) at first use;
//! libsecp256k1 contexts are safe to share between threads for verification, recovery and signing
//! (they are only read after setup).

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;

#[repr(C)]
pub struct Context {
    _p: [u8; 0],
}
#[repr(C)]
struct PublicKey([u8; 64]);
#[repr(C)]
struct Signature([u8; 64]);
#[repr(C)]
struct RecoverableSignature([u8; 65]);

type Callback = Option<unsafe extern "C" fn(*const c_char, *mut c_void)>;

// Flag values from secp256k1.h. CONTEXT_VERIFY and CONTEXT_SIGN keep libsecp256k1 < 0.2 (which needs
// them) working; 0.2+ accepts and ignores them.
const SECP256K1_CONTEXT_VERIFY: c_uint = (1 << 0) | (1 << 8);
const SECP256K1_CONTEXT_SIGN: c_uint = (1 << 0) | (1 << 9);
const SECP256K1_EC_UNCOMPRESSED: c_uint = 1 << 1;

extern "C" {
    fn secp256k1_context_create(flags: c_uint) -> *mut Context;
    fn secp256k1_context_set_illegal_callback(ctx: *mut Context, fun: Callback, data: *const c_void);
    fn secp256k1_context_set_error_callback(ctx: *mut Context, fun: Callback, data: *const c_void);
    fn secp256k1_ec_pubkey_parse(ctx: *const Context, pubkey: *mut PublicKey, input: *const u8, inputlen: usize) -> c_int;
    fn secp256k1_ec_pubkey_serialize(
        ctx: *const Context,
        output: *mut u8,
        outputlen: *mut usize,
        pubkey: *const PublicKey,
        flags: c_uint,
    ) -> c_int;
    fn secp256k1_ecdsa_signature_parse_compact(ctx: *const Context, sig: *mut Signature, input64: *const u8) -> c_int;
    fn secp256k1_ecdsa_signature_normalize(ctx: *const Context, sigout: *mut Signature, sigin: *const Signature) -> c_int;
    fn secp256k1_ecdsa_verify(
        ctx: *const Context,
        sig: *const Signature,
        msghash32: *const u8,
        pubkey: *const PublicKey,
    ) -> c_int;
    fn secp256k1_ecdsa_recoverable_signature_parse_compact(
        ctx: *const Context,
        sig: *mut RecoverableSignature,
        input64: *const u8,
        recid: c_int,
    ) -> c_int;
    fn secp256k1_context_randomize(ctx: *mut Context, seed32: *const u8) -> c_int;
    fn secp256k1_ecdsa_sign_recoverable(
        ctx: *const Context,
        sig: *mut RecoverableSignature,
        msghash32: *const u8,
        seckey: *const u8,
        noncefp: *const c_void,
        ndata: *const c_void,
    ) -> c_int;
    fn secp256k1_ecdsa_recoverable_signature_serialize_compact(
        ctx: *const Context,
        output64: *mut u8,
        recid: *mut c_int,
        sig: *const RecoverableSignature,
    ) -> c_int;
    fn secp256k1_ecdsa_recover(
        ctx: *const Context,
        pubkey: *mut PublicKey,
        sig: *const RecoverableSignature,
        msghash32: *const u8,
    ) -> c_int;
}

struct Ctx(*mut Context);
// SAFETY: the context is never mutated after setup; libsecp256k1 documents const-context calls
// (verify, recover, parse, serialize) as safe to run concurrently.
unsafe impl Send for Ctx {}
unsafe impl Sync for Ctx {}

static CTX: OnceLock<Ctx> = OnceLock::new();

/// Default illegal-argument handler calls abort(); ours does nothing, so a misuse returns 0 instead.
unsafe extern "C" fn ignore(_msg: *const c_char, _data: *mut c_void) {}

fn ctx() -> *const Context {
    CTX.get_or_init(|| unsafe {
        let c = secp256k1_context_create(SECP256K1_CONTEXT_VERIFY | SECP256K1_CONTEXT_SIGN);
        secp256k1_context_set_illegal_callback(c, Some(ignore), std::ptr::null());
        secp256k1_context_set_error_callback(c, Some(ignore), std::ptr::null());
        // Blinding of signing's secret-dependent steps; without OS randomness the context stays unblinded
        // (signing is constant-time either way).
        let mut seed = [0u8; 32];
        if std::fs::File::open("/dev/urandom").and_then(|mut f| std::io::Read::read_exact(&mut f, &mut seed)).is_ok() {
            secp256k1_context_randomize(c, seed.as_ptr());
        }
        Ctx(c)
    })
    .0
}

/// Verify a compact (r||s) signature over a 32-byte digest with a 65-byte 0x04 public key.
/// High-S is accepted (normalised first). Any malformed input gives false.
pub fn verify(sig64: &[u8], digest32: &[u8], pubkey65: &[u8]) -> bool {
    // libsecp256k1 also parses 0x06/0x07 "hybrid" keys; the JS twin (noble) does not.
    if sig64.len() != 64 || digest32.len() != 32 || pubkey65.len() != 65 || pubkey65[0] != 4 {
        return false;
    }
    let ctx = ctx();
    unsafe {
        let mut pk = PublicKey([0; 64]);
        if secp256k1_ec_pubkey_parse(ctx, &mut pk, pubkey65.as_ptr(), 65) != 1 {
            return false;
        }
        let mut sig = Signature([0; 64]);
        if secp256k1_ecdsa_signature_parse_compact(ctx, &mut sig, sig64.as_ptr()) != 1 {
            return false;
        }
        let sig_in = Signature(sig.0);
        secp256k1_ecdsa_signature_normalize(ctx, &mut sig, &sig_in);
        secp256k1_ecdsa_verify(ctx, &sig, digest32.as_ptr(), &pk) == 1
    }
}

/// Recover the 65-byte uncompressed public key; None when the inputs do not yield a key.
pub fn recover(sig64: &[u8], recid: u32, digest32: &[u8]) -> Option<[u8; 65]> {
    if sig64.len() != 64 || digest32.len() != 32 || recid > 3 {
        return None;
    }
    let ctx = ctx();
    unsafe {
        let mut sig = RecoverableSignature([0; 65]);
        if secp256k1_ecdsa_recoverable_signature_parse_compact(ctx, &mut sig, sig64.as_ptr(), recid as c_int) != 1 {
            return None;
        }
        let mut pk = PublicKey([0; 64]);
        if secp256k1_ecdsa_recover(ctx, &mut pk, &sig, digest32.as_ptr()) != 1 {
            return None;
        }
        let mut out = [0u8; 65];
        let mut len = 65usize;
        if secp256k1_ec_pubkey_serialize(ctx, out.as_mut_ptr(), &mut len, &pk, SECP256K1_EC_UNCOMPRESSED) != 1 || len != 65 {
            return None;
        }
        Some(out)
    }
}

/// ECDSA signature of a 32-byte digest: r || s (low-S) || recovery id, 65 bytes. The nonce is RFC 6979's,
/// with `entropy` (32 bytes) as its additional data when given (hedged signatures). None for an invalid key.
pub fn sign(digest32: &[u8], seckey32: &[u8], entropy32: Option<&[u8]>) -> Option<[u8; 65]> {
    if digest32.len() != 32 || seckey32.len() != 32 || entropy32.is_some_and(|e| e.len() != 32) {
        return None;
    }
    let ctx = ctx();
    unsafe {
        let mut sig = RecoverableSignature([0; 65]);
        let ndata = entropy32.map_or(std::ptr::null(), |e| e.as_ptr() as *const c_void);
        if secp256k1_ecdsa_sign_recoverable(ctx, &mut sig, digest32.as_ptr(), seckey32.as_ptr(), std::ptr::null(), ndata) != 1 {
            return None;
        }
        let mut out = [0u8; 65];
        let mut recid: c_int = 0;
        if secp256k1_ecdsa_recoverable_signature_serialize_compact(ctx, out.as_mut_ptr(), &mut recid, &sig) != 1 {
            return None;
        }
        out[64] = recid as u8;
        Some(out)
    }
}
