//! Helpers shared by the runtime's integration tests.

// Each test file uses a part of these.
#![allow(dead_code)]

use dsh_instructions_state::Config;

/// A validated configuration from its JSON input (the one way a `Config`
/// is built, `ConfigInput::resolve`).
pub(crate) fn config_of(v: serde_json::Value) -> Config {
    serde_json::from_value::<dsh_instructions_state::ConfigInput>(v)
        .expect("config input")
        .resolve()
        .expect("valid config")
        .config
}

/// The environment that resolves to `home` (R-HOME-1): `DSH_HOME` for an
/// explicit home, else `HOME` with the default `.dsh` below it.
pub(crate) fn env_for(
    home: &dsh_instructions_runtime::home::DshHome,
) -> dsh_instructions_runtime::home::HomeEnv {
    use dsh_instructions_runtime::home::{HomeEnv, HomeLabel};
    match home.label {
        HomeLabel::Default => HomeEnv {
            home: home.path.parent().map(|p| p.as_str().into()),
            ..HomeEnv::default()
        },
        _ => HomeEnv {
            dsh_home: Some(home.path.as_str().into()),
            ..HomeEnv::default()
        },
    }
}

/// Opens a mount at `cwd` over `fs` through the one entry (R-RT-11), with
/// `config` (`None`: disabled) and the DSH home `home`.
pub(crate) async fn open(
    fs: impl dsh_instructions_runtime::ProviderFactory + 'static,
    cwd: &str,
    config: Option<Config>,
    home: &dsh_instructions_runtime::home::DshHome,
) -> dsh_instructions_runtime::Opened {
    let mut b = dsh_instructions_runtime::MountBuilder::new(cwd)
        .env(env_for(home))
        .fs(fs);
    if let Some(c) = config {
        b = b.validated(c);
    }
    b.open(&dsh_instructions_runtime::discovery::CancellationToken::new())
        .await
        .expect("opens")
}
