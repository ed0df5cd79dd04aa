//! The Rust side of the binding's benchmark rows (`cargo xtask bench node`,
//! issue 47 item 7): the same event as `bench/event.mjs` sends through the
//! binding — a tool read kept in the log, then the step's end — on the
//! facade's `Session`, in one process, over a tree `cargo xtask bench node`
//! made. Prints one line: `rust <label> <median µs> <p90 µs>`.
//!
//! Usage: `event TREE LABEL DIRS ITERATIONS`, where `TREE` holds `repo/`
//! (with `d0` … `d{DIRS-1}`, each with `lib.rs`) and `home/`.
#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

use dsh_agent_instructions::fs::{Utf8Path, Utf8PathBuf};
use dsh_agent_instructions::{
    CancellationToken, CapStdFactory, ConfigInput, HomeEnv, MountBuilder, Preset, Record, Session,
    SessionSettings, SessionStore, TouchKind, ambient_authority,
};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let [tree, label, dirs, iterations] = args.as_slice() else {
        eprintln!("usage: event TREE LABEL DIRS ITERATIONS");
        std::process::exit(2);
    };
    let dirs: usize = dirs.parse().expect("DIRS");
    let iterations: usize = iterations.parse().expect("ITERATIONS");
    let tree = Utf8PathBuf::from(tree.as_str());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let times = rt.block_on(async {
        let env = HomeEnv {
            home: Some(tree.join("home").into_string().into()),
            dsh_home: None,
            ..HomeEnv::from_process().expect("env")
        };
        let store = SessionStore::new(tree.join("sessions-rust"));
        let settings = SessionSettings {
            config: Some(ConfigInput {
                preset: Some(Preset::Dsh),
                ..ConfigInput::default()
            }),
            ..SessionSettings::default()
        };
        let base = MountBuilder::default()
            .env(env)
            .fs(CapStdFactory::new(ambient_authority()));
        let cancel = CancellationToken::new();
        let log = store
            .create(label, tree.join("repo"), &settings)
            .expect("create");
        let session = Session::mount(log, settings.apply(base), &cancel)
            .await
            .expect("mount");
        session.prompt("hi".into(), &cancel).await.expect("prompt");
        let file = |d: usize| tree.join(format!("repo/d{d}/lib.rs"));
        // Warm: every directory known, as the Node side does.
        for d in 0..dirs {
            event(&session, &file(d), &cancel).await;
        }
        let mut times = Vec::with_capacity(iterations);
        for i in 0..iterations {
            let start = Instant::now();
            event(&session, &file(i % dirs), &cancel).await;
            times.push(start.elapsed());
        }
        times
    });
    let (median, p90) = stats(times);
    println!("rust {label} {median:.1} {p90:.1}");
}

/// One event: a kept read, then the step's end.
async fn event(session: &Session, path: &Utf8Path, cancel: &CancellationToken) {
    session
        .touch(path, TouchKind::Read, Record::Keep)
        .await
        .expect("touch");
    session.step_end(cancel).await.expect("step_end");
}

fn stats(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    (us(v[v.len() / 2]), us(v[v.len() * 9 / 10]))
}
