//! `stead mcp [--read-only]`: stead as tools for AI agents, over the Model Context
//! Protocol on stdio.
//!
//! The process is a client like any other: each tool call connects to the state
//! directory's server (starting one when none serves, as every command does) and answers
//! the JSON the matching command prints with `--json`. The tools are in `tools.rs`, the
//! bounded log reader in `log.rs`, the documentation resources in `docs.rs`.
//!
//! stdout carries protocol messages and nothing else. The transport writes to a private
//! copy of the descriptor, and descriptor 1 itself is pointed at stderr before anything
//! runs: a stray print, a panic message or a restart command's output can only ever
//! reach stderr, never corrupt the protocol stream.

mod docs;
mod log;
mod tools;

use std::fs::File;
use std::path::Path;

use anyhow::Context;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use stead_client::Client;
use stead_protocol::exit;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Offer only the tools that change nothing (listing, showing, logs, readiness, the
    /// gate); a call of any other is refused
    #[arg(long)]
    read_only: bool,
}

/// What the server tells an agent about itself when it connects.
const INSTRUCTIONS: &str = "stead is a job server: scheduled and on-demand command runs, \
each kept in a durable ledger. Runs outlive restarts: a run cut by a restart is \
`interrupted` and resumed, never reported as a failure. Before restarting a service (or \
stead itself), use `gate` (it waits until nothing would be cut and answers `deferred` \
otherwise), hold a service with `hold_acquire` while mid-work on it, and restart only \
with `restart`, which goes through the gate. Job fields: resource \
stead://docs/job-fields; cron syntax and durations: stead://docs/scheduling.";

pub fn run(dir: Option<&Path>, args: Args) -> anyhow::Result<i32> {
    let protocol = claim_stdout()?;
    let client = Client::for_state_dir(dir)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the MCP server's runtime")?;
    runtime.block_on(async move {
        let server = Stead::new(client, args.read_only);
        let out = tokio::fs::File::from_std(protocol);
        let running = server
            .serve((tokio::io::stdin(), out))
            .await
            .context("the MCP session did not start")?;
        running
            .waiting()
            .await
            .context("the MCP session ended abnormally")?;
        anyhow::Ok(())
    })?;
    Ok(exit::SUCCESS)
}

/// Takes stdout for the protocol: answers a private copy of it and points descriptor 1
/// at stderr, so nothing else written "to stdout" reaches the client.
fn claim_stdout() -> anyhow::Result<File> {
    let protocol = rustix::io::fcntl_dupfd_cloexec(rustix::stdio::stdout(), 3)
        .context("cannot duplicate stdout for the protocol")?;
    rustix::stdio::dup2_stdout(rustix::stdio::stderr()).context("cannot point stdout at stderr")?;
    Ok(File::from(protocol))
}

/// The MCP server: the state directory's client and the tools it may offer.
#[derive(Clone)]
pub struct Stead {
    client: Client,
    read_only: bool,
    tools: ToolRouter<Stead>,
}

impl Stead {
    pub fn new(client: Client, read_only: bool) -> Self {
        Stead {
            client,
            read_only,
            tools: Self::tool_router(),
        }
    }

    /// Whether this server offers `tool`: every tool, or with `--read-only` only those
    /// whose annotations say they change nothing.
    fn offers(&self, tool: &Tool) -> bool {
        !self.read_only
            || tool
                .annotations
                .as_ref()
                .is_some_and(|a| a.read_only_hint == Some(true))
    }
}

impl ServerHandler for Stead {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("stead", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self
            .tools
            .list_all()
            .into_iter()
            .filter(|t| self.offers(t))
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.get(name).filter(|t| self.offers(t)).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(tool) = self.tools.get(&request.name)
            && !self.offers(tool)
        {
            // A tool error, not a protocol one: the agent is told why, and nothing ran.
            return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                "{} changes things, and this server is read-only (stead mcp --read-only): \
                 nothing was done",
                request.name
            ))])
            .into());
        }
        self.tools
            .call(ToolCallContext::new(self, request, context))
            .await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(docs::list()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        docs::read(&request.uri).map(Into::into).ok_or_else(|| {
            ErrorData::resource_not_found(
                format!("no resource {:?} (resources/list names them)", request.uri),
                None,
            )
        })
    }
}
