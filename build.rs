//! Compiles the `.proto` files in `proto/` with a pure-Rust protobuf compiler, so that the
//! build machine needs no `protoc` binary.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protos = [
        "proto/profiler_plugin_data.proto",
        "proto/arkts_plugin.proto",
    ];
    for proto in protos {
        println!("cargo:rerun-if-changed={proto}");
    }
    let descriptors = protox::compile(protos, ["proto"])?;
    prost_build::Config::new().compile_fds(descriptors)?;
    Ok(())
}
