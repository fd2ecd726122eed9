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
    // `bytes` fields as `Bytes`: decoding a record then slices its payload instead of
    // copying it (twice: the plugin data, then the inspector message inside it).
    prost_build::Config::new()
        .bytes(["."])
        .compile_fds(descriptors)?;
    Ok(())
}
