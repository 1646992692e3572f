//! Gives libtf_shm_c.so a SONAME, so executables linked against it record `libtf_shm_c.so`
//! (found through their RPATH or LD_LIBRARY_PATH) instead of the build-time path.
fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libtf_shm_c.so");
    }
}
