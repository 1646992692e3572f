//! tf_shm_bridge: placeholder until the r2r node lands.
fn main() {
    eprintln!("tf_shm_bridge: not built yet");
    std::process::exit(2);
}
