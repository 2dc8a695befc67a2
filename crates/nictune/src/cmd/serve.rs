//! `nictune serve`: answer bounded tests from `nictune bench --peer` clients until Ctrl-C.

use crate::cmd::apply;
use crate::cmd::source::check_iface_name;
use crate::output::{require_root, Ctx, HintExt, Outcome};
use anyhow::{Context, Result};
use nictune_apply::state::StateDir;
use nictune_bench::cancel::Cancel;
use nictune_bench::changes::ChangeHandler;
use nictune_bench::host_changes::HostChanges;
use nictune_bench::serve::{self, ServeConfig};
use nictune_bench::{peer, Limits, Token};
use nictune_core::error::InvalidInput;
use nictune_core::privilege::Privilege;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, clap::Args)]
#[command(after_help = "\
The server runs nothing before a client presents the shared token, runs one test at a time
and answers data traffic only from the client's address. Each test is capped:
  time          120 s measured (plus at most 10 s warm-up)
  connections   256, and up to 256 load streams beside a latency test (--load stream:N)
  messages      1 MiB requests and responses
  rate          1,000,000 requests/s (open loop)
  bytes sent    16 GiB of responses and echoes; past it the test goes unanswered
                (it only ever receives bulk data, never sends it)

It changes nothing on this host unless started with --allow-changes IFACE (root). Then one
client at a time (`nictune tune --iface … --peer … --both-ends`) may change that interface's
moderation settings, and with --allow-reload its driver's module parameters (a reload takes
every port of the driver down for seconds). Each change is journaled in --state-dir like
`nictune apply`, and everything is put back when the client releases its session, closes
the connection or stays silent for 30 s, and when the server stops. A server killed outright
leaves the journal: `nictune revert` on this host restores.

Examples:
  NICTUNE_TOKEN=$(cat /etc/nictune/token) nictune serve --bind 198.18.0.2:12866
  nictune serve --token-file /etc/nictune/token
  sudo nictune serve --bind 198.18.0.2:12866 --token-file /etc/nictune/token \
      --allow-changes eth1 --allow-reload")]
pub struct Args {
    /// Address to listen on (only this one).
    #[arg(long, value_name = "ADDR:PORT", default_value_t = SocketAddr::from(([127, 0, 0, 1], peer::DEFAULT_PORT)))]
    pub bind: SocketAddr,
    /// File holding the shared token (else $NICTUNE_TOKEN).
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,
    /// Let the client change this interface's moderation settings (journaled, put back
    /// when the client goes). Needs root.
    #[arg(long, value_name = "IFACE")]
    pub allow_changes: Option<String>,
    /// With --allow-changes: also the module parameters of the interface's driver (reloads
    /// the driver, taking all its ports down for seconds).
    #[arg(long, requires = "allow_changes")]
    pub allow_reload: bool,
    /// With --allow-changes: allow it on the interface that carries the default route or
    /// this SSH session.
    #[arg(long, requires = "allow_changes")]
    pub force: bool,
    #[command(flatten)]
    pub state: crate::cmd::apply::StateArgs,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<Outcome> {
    let token = token(args.token_file.as_ref())?;
    let changes = match &args.allow_changes {
        Some(iface) => Some(changes(&args, iface, ctx.privilege)?),
        None => None,
    };
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
        changes,
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

/// The change handler for `--allow-changes IFACE`, after the checks `nictune apply` makes:
/// root, a valid interface that exists, not the default route or this SSH session (nor, with
/// --allow-reload, any port of its driver) unless --force, no unfinished earlier change.
fn changes(args: &Args, iface: &str, privilege: Privilege) -> Result<Arc<dyn ChangeHandler>> {
    check_iface_name(iface)?;
    require_root(
        privilege,
        "--allow-changes needs root (it changes the interface's settings)",
        "run it as root, or leave out --allow-changes to serve tests only",
    )?;
    if !std::path::Path::new("/sys/class/net").join(iface).exists() {
        let bad = InvalidInput::new("--allow-changes", iface, "an interface of this host");
        return Err(bad).hint("`nictune show` lists the interfaces");
    }
    let netns = apply::journal_netns(None)?;
    let handler = HostChanges::new(
        args.state.state_dir.clone(),
        iface,
        netns,
        args.allow_reload,
    );
    apply::refuse_risky_iface(iface, args.force)?;
    if let (true, Some(driver)) = (args.allow_reload, &handler.driver) {
        for port in nictune_linux::write::module::ports_bound(driver) {
            apply::refuse_risky_iface(&port, args.force)
                .with_context(|| format!("--allow-reload: reloading {driver} takes {port} down"))?;
        }
    }
    apply::refuse_if_unfinished(&StateDir::new(&args.state.state_dir))?;
    Ok(Arc::new(handler))
}

fn token(file: Option<&PathBuf>) -> Result<Token> {
    Token::load(file.map(PathBuf::as_path))
        .hint("generate one with: head -c 24 /dev/urandom | base64")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[derive(clap::Parser)]
    struct Wrap {
        #[command(flatten)]
        args: Args,
    }

    #[test]
    fn the_help_states_the_caps_the_server_enforces() {
        let help = Wrap::command().render_long_help().to_string();
        let l = Limits::SERVE;
        let caps = [
            format!("{} s measured", l.max_duration.as_secs_f64()),
            format!("connections   {}", l.max_connections),
            format!("up to {} load streams", l.max_connections),
            format!("{} MiB requests", l.max_message.0 >> 20),
            format!("{} GiB", l.max_sent.unwrap().0 >> 30),
        ];
        for cap in caps {
            assert!(help.contains(&cap), "{cap:?} not in\n{help}");
        }
        assert!(help.contains("1,000,000 requests/s") && l.max_rate == 1_000_000.0);
    }
}
