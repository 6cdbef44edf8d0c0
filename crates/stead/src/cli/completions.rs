//! `stead completions SHELL` and `stead man`: the shell completion scripts and the roff
//! man pages, generated from the command line's own definition, so they cannot drift
//! from it. Local only: no state directory, no server.
//!
//! Hidden subcommands (`monitor`, which only the server starts) are left out of both.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::{Command, CommandFactory as _, ValueEnum};
use stead_protocol::exit;

use super::{Cli, output};

/// The name the scripts complete and the man pages are titled with.
const BIN_NAME: &str = "stead";

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to print the completion script for
    #[arg(value_enum)]
    shell: Shell,
}

/// The shells a completion script can be printed for.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Shell {
    /// Bash (with the bash-completion package)
    Bash,
    /// Zsh (a `#compdef` file for a directory on `$fpath`)
    Zsh,
    /// Fish
    Fish,
}

impl Shell {
    fn generator(self) -> clap_complete::Shell {
        match self {
            Self::Bash => clap_complete::Shell::Bash,
            Self::Zsh => clap_complete::Shell::Zsh,
            Self::Fish => clap_complete::Shell::Fish,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// Write stead.1 and a page per subcommand (stead-job.1, stead-job-add.1, ...) into
    /// DIR, creating it, and print their paths [default: print stead.1 to stdout]
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// Prints the completion script for the shell to stdout.
pub fn completions(args: CompletionsArgs) -> anyhow::Result<i32> {
    let mut script = Vec::new();
    clap_complete::generate(
        args.shell.generator(),
        &mut visible_command(),
        BIN_NAME,
        &mut script,
    );
    output::copy(&mut script.as_slice())?;
    Ok(exit::SUCCESS)
}

/// Prints the `stead` man page to stdout, or writes every page into `--dir`.
pub fn man(args: ManArgs) -> anyhow::Result<i32> {
    // The `help` subcommand is no command of its own to document.
    let mut cmd = Cli::command().disable_help_subcommand(true);
    let Some(dir) = args.dir else {
        let mut page = Vec::new();
        clap_mangen::Man::new(cmd).render(&mut page)?;
        output::copy(&mut page.as_slice())?;
        return Ok(exit::SUCCESS);
    };
    fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    // Building names each subcommand `stead-<sub>` (nested: `stead-<sub>-<subsub>`), the
    // names the pages refer to one another by.
    cmd.build();
    let mut written = Vec::new();
    write_pages(&cmd, &dir, &mut written)?;
    let listing: String = written
        .iter()
        .map(|path| format!("{}\n", path.display()))
        .collect();
    output::text(&listing)?;
    Ok(exit::SUCCESS)
}

/// Writes the page of `cmd`, then those of its visible subcommands, depth first.
fn write_pages(cmd: &Command, dir: &Path, written: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let page = clap_mangen::Man::new(cmd.clone());
    let path = dir.join(page.get_filename());
    let mut roff = Vec::new();
    page.render(&mut roff)?;
    fs::write(&path, roff).with_context(|| format!("cannot write {}", path.display()))?;
    written.push(path);
    for sub in cmd.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        write_pages(sub, dir, written)?;
    }
    Ok(())
}

/// `stead`'s command line as a shell should see it: without its hidden subcommands.
///
/// clap_complete lists every subcommand, hidden or not, and a clap `Command` cannot drop
/// a subcommand, so the root is rebuilt from its parts, less the hidden ones. Only the
/// root has hidden subcommands (a test checks), and the help of the rebuilt root and of
/// each of its subcommands is the original's, to the byte (another test checks).
fn visible_command() -> Command {
    let full = Cli::command();
    let mut visible = Command::new(BIN_NAME)
        .version(env!("CARGO_PKG_VERSION"))
        .propagate_version(full.is_propagate_version_set())
        .subcommand_required(full.is_subcommand_required_set())
        .arg_required_else_help(full.is_arg_required_else_help_set())
        .args(full.get_arguments().cloned())
        .groups(full.get_groups().cloned())
        .subcommands(
            full.get_subcommands()
                .filter(|sub| !sub.is_hide_set())
                .cloned(),
        );
    if let Some(about) = full.get_about() {
        visible = visible.about(about.clone());
    }
    if let Some(long_about) = full.get_long_about() {
        visible = visible.long_about(long_about.clone());
    }
    visible
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_root_has_hidden_subcommands() {
        fn hidden_below(cmd: &Command, path: &str, found: &mut Vec<String>) {
            for sub in cmd.get_subcommands() {
                let sub_path = format!("{path} {}", sub.get_name());
                if sub.is_hide_set() {
                    found.push(sub_path.clone());
                }
                hidden_below(sub, &sub_path, found);
            }
        }
        let mut found = Vec::new();
        // Built, so that the deferred arguments and subcommands are there to walk (and
        // clap's own `help`, which lists every command, hidden ones too, is left out).
        let mut cli = Cli::command();
        cli.build();
        for sub in cli.get_subcommands().filter(|s| s.get_name() != "help") {
            hidden_below(sub, sub.get_name(), &mut found);
        }
        assert!(
            found.is_empty(),
            "visible_command() only prunes the root; hidden below it: {found:?}"
        );
    }

    #[test]
    fn the_visible_command_is_the_full_one_less_hidden_subcommands() {
        let mut full = Cli::command();
        let mut visible = visible_command();
        full.build();
        visible.build();
        assert!(visible.find_subcommand("monitor").is_none());
        assert!(full.find_subcommand("monitor").is_some());
        assert_eq!(visible.render_version(), full.render_version());
        // The help of the root and of every visible subcommand, to the byte (the help
        // shows neither hidden subcommands nor the settings completion has no use for).
        let helps = |cmd: &mut Command| -> Vec<String> {
            let mut helps = vec![cmd.render_long_help().to_string()];
            for sub in cmd.get_subcommands_mut().filter(|sub| !sub.is_hide_set()) {
                helps.push(sub.render_long_help().to_string());
            }
            helps
        };
        assert_eq!(helps(&mut visible), helps(&mut full));
    }
}
