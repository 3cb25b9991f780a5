// Links the system libsecp256k1 as a shared library (Debian's static .a is not built with -fPIC).
// SECP256K1_LIB_DIR may point at a non-standard install. N-API symbols are resolved by node at load time.
fn main() {
    println!("cargo:rerun-if-env-changed=SECP256K1_LIB_DIR");
    if let Ok(dir) = std::env::var("SECP256K1_LIB_DIR") {
        println!("cargo:rustc-link-search=native={dir}");
    }
    println!("cargo:rustc-link-lib=dylib=secp256k1");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("macos") {
        // node provides napi_* at load time; tell ld64 not to insist on them now.
        println!("cargo:rustc-cdylib-link-arg=-undefined");
        println!("cargo:rustc-cdylib-link-arg=dynamic_lookup");
    }
}
