//! The guard as an agent's pre-tool-use hook: the agent sends the tool call as JSON on
//! standard input, and reads an exit code of 2 as "block it", with the reason on
//! standard error and a decision on standard output in the two JSON forms agents know
//! (`hookSpecificOutput.permissionDecision` and the older `decision`/`reason`).
//!
//! Input the guard cannot read (not JSON, no tool name, a Bash call without a command)
//! is denied when it names a guarded service anywhere, and allowed otherwise, the same
//! rule as for a command that does not parse: a hook that cannot read its input must
//! not pass a restart, but must not block every tool call either. Input too large to
//! read is denied.

use serde_json::{Value, json};

use super::{EXIT_REFUSED, Guard, MAX_COMMAND, Refusal, Verdict, plain};

/// The tool whose calls are shell commands.
const SHELL_TOOL: &str = "Bash";

/// What the hook process answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookAnswer {
    pub exit_code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl HookAnswer {
    /// A denial with this message.
    pub fn deny(message: &str) -> HookAnswer {
        let decision = json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": message,
            },
            "decision": "block",
            "reason": message,
        });
        HookAnswer {
            exit_code: EXIT_REFUSED,
            stdout: format!("{decision}\n"),
            stderr: format!("{message}\n"),
        }
    }

    fn allow() -> HookAnswer {
        HookAnswer {
            exit_code: 0,
            stdout: String::new(),
            stderr: String::new(),
        }
    }
}

/// The message a refusal reads as.
pub(crate) fn message(refusal: &Refusal) -> String {
    match &refusal.instead {
        Some(instead) => format!("stead guard: {}; run instead: {instead}", refusal.reason),
        None => format!("stead guard: {}", refusal.reason),
    }
}

pub(super) fn answer(guard: &Guard, input: &str) -> HookAnswer {
    if input.len() > 2 * MAX_COMMAND {
        return HookAnswer::deny(&format!(
            "stead guard: this tool call is {} bytes long, more than the guard reads",
            input.len()
        ));
    }
    let message = match command_of(input) {
        Ok(None) => return HookAnswer::allow(),
        Ok(Some(command)) => match guard.check(&command) {
            Verdict::Allow => return HookAnswer::allow(),
            Verdict::Refuse(refusal) => message(&refusal),
        },
        Err(_) if !guard.names_a_service(input) => return HookAnswer::allow(),
        Err(why) => format!(
            "stead guard: cannot read this tool call ({why}), and it mentions a guarded service"
        ),
    };
    HookAnswer::deny(&message)
}

impl Guard {
    /// Whether `text` names any guarded service: the guard's test for input it cannot
    /// read.
    fn names_a_service(&self, text: &str) -> bool {
        let plain = plain(text);
        self.inner.guarded.iter().any(|g| g.mentions(&plain) > 0)
    }
}

/// The shell command of a tool call; `None` for another tool.
fn command_of(input: &str) -> Result<Option<String>, String> {
    let call: Value = serde_json::from_str(input).map_err(|e| format!("not JSON: {e}"))?;
    let tool = call
        .get("tool_name")
        .and_then(Value::as_str)
        .ok_or("no tool_name")?;
    if tool != SHELL_TOOL {
        return Ok(None);
    }
    let command = call.pointer("/tool_input/command").and_then(Value::as_str);
    let command = command.ok_or("a Bash call without tool_input.command")?;
    Ok(Some(command.to_owned()))
}

#[cfg(test)]
mod tests {
    use stead_protocol::ServiceSpec;

    use super::*;

    fn web() -> Guard {
        Guard::new(&[ServiceSpec {
            name: "web".into(),
            systemd_unit: Some("web.service".into()),
            ..ServiceSpec::default()
        }])
    }

    fn bash(command: &str) -> String {
        json!({"tool_name": "Bash", "tool_input": {"command": command}}).to_string()
    }

    #[test]
    fn an_ungated_command_is_allowed_silently() {
        let answer = web().hook(&bash("cargo test && git status"));
        assert_eq!(answer, HookAnswer::allow());
    }

    #[test]
    fn an_ungated_restart_is_denied_with_exit_2_and_both_json_forms() {
        let answer = web().hook(&bash("systemctl --user restart web.service"));
        assert_eq!(answer.exit_code, 2);
        assert!(
            answer.stderr.contains("guarded service web"),
            "{}",
            answer.stderr
        );
        let out: Value = serde_json::from_str(&answer.stdout).unwrap();
        let specific = &out["hookSpecificOutput"];
        assert_eq!(specific["hookEventName"], "PreToolUse");
        assert_eq!(specific["permissionDecision"], "deny");
        let reason = specific["permissionDecisionReason"].as_str().unwrap();
        assert!(
            reason.ends_with(
                "run instead: stead gate --service web && systemctl --user restart web.service"
            ),
            "{reason}"
        );
        assert_eq!(out["decision"], "block");
        assert_eq!(out["reason"], reason);
    }

    #[test]
    fn a_gated_restart_is_allowed() {
        let command = "stead gate --service web && systemctl --user restart web.service";
        assert_eq!(web().hook(&bash(command)), HookAnswer::allow());
    }

    #[test]
    fn other_tools_are_allowed_whatever_they_carry() {
        let input = json!({"tool_name": "Write", "tool_input": {"content": "pkill stead"}});
        assert_eq!(web().hook(&input.to_string()), HookAnswer::allow());
    }

    #[test]
    fn unreadable_input_is_denied_only_when_it_names_a_guarded_service() {
        assert_eq!(web().hook("not json at all"), HookAnswer::allow());
        let answer = web().hook("{\"tool_name\": \"Bash\", \"command\": \"pkill web\"");
        assert_eq!(answer.exit_code, 2);
        assert!(
            answer.stderr.contains("cannot read this tool call"),
            "{}",
            answer.stderr
        );
        let missing = json!({"tool_name": "Bash", "tool_input": {"cmd": "systemctl restart web"}});
        assert_eq!(web().hook(&missing.to_string()).exit_code, 2);
    }

    #[test]
    fn input_that_makes_the_parser_fail_is_denied_whatever_it_names() {
        // The tokenizer panics on this; nothing in it names a service.
        let answer = web().hook(&bash("${<<EOF\n}\nEOF"));
        assert_eq!(answer.exit_code, 2, "{answer:?}");
        let deep = "{ ".repeat(1500) + "ls" + &"; }".repeat(1500);
        let answer = web().hook(&bash(&deep));
        assert_eq!(answer.exit_code, 2, "{answer:?}");
        assert!(
            answer.stderr.contains("nested too deep"),
            "{}",
            answer.stderr
        );
        let answer = web().hook(&bash(&"if true; then ".repeat(1500)));
        assert_eq!(answer.exit_code, 2, "{answer:?}");
    }
}
