//! Compiles the tf2 shim (src/tf2_shim.cpp) against Debian's ROS 1 tf2 (`libtf2-dev`).
//!
//! tf2's pkg-config file names `-ltf2 -lconsole_bridge`; ros::Time/Duration live in
//! librostime. Without the headers the crate cannot build: scripts/bench.sh installs them.

fn main() {
    println!("cargo:rerun-if-changed=src/tf2_shim.cpp");
    if !std::path::Path::new("/usr/include/tf2/buffer_core.h").exists() {
        panic!("tf2 headers missing: apt-get install libtf2-dev (scripts/bench.sh does)");
    }
    cc::Build::new()
        .cpp(true)
        .file("src/tf2_shim.cpp")
        .flag("-std=c++14")
        // Same optimisation the Debian package's own users get; tf2 itself is prebuilt -O2.
        .opt_level(2)
        .warnings(false)
        .compile("tf2_shim");
    // The C++ arm: tf_shm.hpp over tf_shm_c's C ABI (its symbols come from the tf_shm_c rlib).
    println!("cargo:rerun-if-changed=src/cxx_arm.cpp");
    println!("cargo:rerun-if-changed=../tf_shm_c/include/tf_shm.hpp");
    println!("cargo:rerun-if-changed=../tf_shm_c/include/tf_shm.h");
    cc::Build::new()
        .cpp(true)
        .file("src/cxx_arm.cpp")
        .include("../tf_shm_c/include")
        .flag("-std=c++17")
        .opt_level(2)
        .compile("tf_shm_cxx_arm");
    for lib in ["tf2", "console_bridge", "rostime"] {
        println!("cargo:rustc-link-lib=dylib={lib}");
    }
}
