//! `nictune serve`: answer bounded tests from `nictune bench --peer` clients until Ctrl-C.

use crate::output::{Ctx, HintExt, Outcome};
use anyhow::{Context, Result};
use nictune_bench::cancel::Cancel;
use nictune_bench::serve::{self, ServeConfig};
use nictune_bench::{peer, Limits, Token};
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(after_help = "\
The server runs nothing before a client presents the shared token, runs one test at a time,
caps each test (120 s, 16 connections, 1 MiB messages, 1,000,000 requests/s) and answers
data traffic only from the client's address.

Examples:
  NICTUNE_TOKEN=$(cat /etc/nictune/token) nictune serve --bind 198.18.0.2:12866
  nictune serve --token-file /etc/nictune/token")]
pub struct Args {
    /// Address to listen on (only this one).
    #[arg(long, value_name = "ADDR:PORT", default_value_t = SocketAddr::from(([127, 0, 0, 1], peer::DEFAULT_PORT)))]
    pub bind: SocketAddr,
    /// File holding the shared token (else $NICTUNE_TOKEN).
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<Outcome> {
    let token = token(args.token_file.as_ref())?;
    let cancel = Cancel::new();
    cancel
        .on_signals()
        .context("installing the Ctrl-C handler")?;
    let listener = serve::bind(args.bind).hint("choose another --bind address or port")?;
    let cfg = ServeConfig {
        bind: args.bind,
        token,
        limits: Limits::SERVE,
        cancel,
        max_sessions: None,
        hello_timeout: serve::HELLO_TIMEOUT,
    };
    let json = ctx.json;
    let log = move |line: &str| {
        if json {
            eprintln!("{}", serde_json::json!({ "serve": line }));
        } else {
            eprintln!("serve: {line}");
        }
    };
    serve::serve(listener, &cfg, &log).context("serving")?;
    Ok(Outcome::Success)
}

fn token(file: Option<&PathBuf>) -> Result<Token> {
    Token::load(file.map(PathBuf::as_path))
        .hint("generate one with: head -c 24 /dev/urandom | base64")
}
