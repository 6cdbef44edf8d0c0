//! `stead dashboard`: the web dashboard's address, with its token.
//!
//! The server starts the HTTP API on a free loopback port if the config names none, so
//! the dashboard is one command away without a port to choose. The token travels in the
//! URL's fragment, which a browser keeps to itself.

use std::path::Path;
use std::process::{Command, Stdio};

use stead_client::Client;
use stead_protocol::{HttpEndpoint, exit};

use super::output::{self, OutputArgs};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Also open it in the default browser (xdg-open on Linux, open on macOS)
    #[arg(long)]
    open: bool,
    #[command(flatten)]
    format: OutputArgs,
}

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let client = Client::for_state_dir(dir)?;
    let endpoint = super::connect(&client)?.http(true)?;
    let (Some(url), Some(dashboard)) = (&endpoint.url, &endpoint.dashboard_url) else {
        anyhow::bail!("the server did not start its HTTP API");
    };
    output::show_with(&endpoint, args.format, || render(&endpoint, url, dashboard))?;
    if args.open {
        open(dashboard)?;
    }
    Ok(exit::SUCCESS)
}

fn render(endpoint: &HttpEndpoint, url: &str, dashboard: &str) -> String {
    format!(
        "dashboard  {dashboard}\napi        {url}  (Authorization: Bearer <the token in {file}>)\n\
         The address holds the token: share it as you would a password. Without\n\
         [http] listen in config.toml the port changes when the server restarts.\n",
        file = endpoint.token_file,
    )
}

fn open(url: &str) -> anyhow::Result<()> {
    let opener = stead_sys::dirs::URL_OPENER;
    let status = Command::new(opener)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match status {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => anyhow::bail!("{opener} failed ({status}); open the address above by hand"),
        Err(e) => anyhow::bail!("cannot run {opener} ({e}); open the address above by hand"),
    }
}
