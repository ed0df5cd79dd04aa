//! Links the addon the way Node loads it (napi-build sets the linker flags
//! a `cdylib` that Node `dlopen`s needs on each platform).
fn main() {
    napi_build::setup();
}
