//! Where the output of a command whose status is not used goes: a reader further up (a command
//! substitution, a pipeline, a file the script names again) makes that output data the script
//! uses, so the command is not uncoupled.

use crate::engine::exec::kinds::KindName;
use tree_sitter::Node;

use super::super::shell::Walk;
use super::*;

/// Whether the output of `at` (whose status is not used) is data the script uses further up: it
/// is in a command substitution, a file written and named again, or a pipeline whose later
/// commands read it (`{ remote; local; } | grep -q x`).
pub(super) fn output_used_above(at: Node<'_>, walk: &Walk<'_>) -> bool {
    let Some((root, _)) = walk.top_functions.get(walk.tree.get()) else {
        return output_used_above_from(at, std::iter::successors(at.parent(), |p| p.parent()), walk);
    };
    // (A tree with no substitution, pipeline or redirection has nothing to look for.)
    if !with_facts(*root, walk, |facts| facts.output_users) {
        return false;
    }
    let path = path_to(*root, at);
    work(walk, path.len());
    output_used_above_from(at, path.into_iter().rev(), walk)
}

/// Whether what `n` (a statement whose status `flow::uncoupled` drops: `|| true`, `| true`,
/// `&`) writes is read elsewhere: a file it, or the pipeline around it, writes that the script
/// names again (or whose name it computes: `> /tmp/$(echo s)`), or a pipeline or a file written
/// further up (`{ remote || true; } | grep -q x`). A substitution's value is left to the walk of
/// its assignment (bash 5.2 and dash 0.5.12 exit 1 with the database down on `pg_isready -h db
/// > /tmp/s || true; grep -q accepting /tmp/s`).
pub(in crate::engine::exec) fn output_kept(n: Node<'_>, walk: &Walk<'_>) -> bool {
    // (Another element of its own pipeline that writes a file reads its output: below.)
    if blind::check_writes_a_read_file(n, walk) {
        return true;
    }
    let Some((root, _)) = walk.top_functions.get(walk.tree.get()) else {
        return output_reaches(n, std::iter::successors(n.parent(), |p| p.parent()), walk, false);
    };
    if !with_facts(*root, walk, |facts| facts.output_users) {
        return false;
    }
    let path = path_to(*root, n);
    work(walk, path.len());
    output_reaches(n, path.into_iter().rev(), walk, false)
}

/// [`output_used_above`] of `child` over its ancestors `up`, nearest first.
fn output_used_above_from<'a>(child: Node<'a>, up: impl Iterator<Item = Node<'a>>, walk: &Walk<'_>) -> bool {
    output_reaches(child, up, walk, true)
}

/// [`output_used_above_from`], where a substitution counts as a reader when `substitutions`.
fn output_reaches<'a>(
    mut child: Node<'a>,
    up: impl Iterator<Item = Node<'a>>,
    walk: &Walk<'_>,
    substitutions: bool,
) -> bool {
    for parent in up {
        match parent.kind_name() {
            // `x=$(check || echo down)` whose `x` is never read but written out: the value goes
            // nowhere (s25: `set -e; x=$(redis-cli -h cache ping || echo down); test -d /`
            // exits 0 / 0 in bash 5.2 and dash 0.5.12).
            "command_substitution" if substitutions && unread_value(parent, walk) => return false,
            // `state=$(check || echo DOWN); case "$state" in PONG) echo ok;; *) echo bad >&2;;
            // esac`: the value only chooses a harmless item, or is only written out (s26).
            "command_substitution" if substitutions && value_reaches_no_status(parent, walk) => return false,
            "command_substitution" | "process_substitution" if substitutions => return true,
            "redirected_statement" if blind::writes_a_read_file(child, parent, walk) => return true,
            "pipeline" => {
                let mut c = parent.walk();
                let after: Vec<Node<'_>> = parent
                    .named_children(&mut c)
                    .filter(|k| is_statement(*k) && k.start_byte() >= child.end_byte())
                    .collect();
                // A filter that exits 0 whatever it reads (`| logger`, `| tee -a log`,
                // `filters`) passes the output on to where the pipeline's goes, looked at
                // further up (s25: `{ redis-cli -h cache ping || echo x; } 2>&1 | logger; test
                // -d /` exits 0 / 0 in bash 5.2 and dash 0.5.12).
                let functions = walk.defined_functions.get_or_init(|| defined_functions(walk.src));
                let known = walk.status.as_ref().map_or(&[][..], |r| r.functions.as_slice());
                let passes = |k: &Node<'_>| {
                    trivial_reader(*k, walk)
                        || (filters::plain_filter_element(*k, walk, functions)
                            && filters::plain_filter_element(*k, walk, known))
                };
                if !after.iter().all(passes) {
                    return true;
                }
            }
            _ => {}
        }
        child = parent;
    }
    false
}

/// Whether the value of the command substitution `sub` is only a variable's
/// (`NAME=$(...)`, a statement of its own or a part of an `&&`/`||` list) that the script never
/// reads (`unread::only_assigned`; no `${!ref}`, `export`, ...: `harmless::may_be_read_elsewhere`),
/// in a script no caller's shell runs after (`Rules::called`). (Not `only_echoed`, whose look at
/// an `echo`'s output comes back here: `x=$({ check || echo x; } | cat)`.)
fn unread_value(sub: Node<'_>, walk: &Walk<'_>) -> bool {
    let Some(rules) = walk.status.as_ref() else {
        return false;
    };
    let mut up = sub.parent();
    while let Some(u) = up.filter(|u| matches!(u.kind_name(), "string" | "concatenation")) {
        up = u.parent();
    }
    let Some(assignment) = up.filter(|u| u.kind_name() == "variable_assignment") else {
        return false;
    };
    !rules.called
        && assignment.parent().is_some_and(subst::assignment_statement_in)
        && assignment.child_by_field("value").is_some_and(|v| v.start_byte() <= sub.start_byte())
        && assignment.child_by_field("name").is_some_and(|name| {
            !constructs::env_like(text(name, walk))
                && !rules.container_env.1
                && !rules.container_env.0.iter().any(|d| d == text(name, walk))
                && !harmless::may_be_read_elsewhere(name, walk)
                && (unread::only_assigned(text(name, walk), walk.src)
                    || only_printed_outside(name, sub, walk))
        })
}

/// Whether the value of the command substitution `sub` reaches no status whatever it holds, as
/// the walk judges a check's own substitution (`discarded_at`): it is the value of `NAME=$(...)`
/// (a statement of its own or a part of an `&&`/`||` list), and `NAME` is only written out
/// (`harmless::only_echoed`) or read as the subject of `case` statements whose items are all
/// harmless (`shapes::only_case_subject`), and no caller's code names it; or it is the subject of
/// such a `case` itself, or an argument of a command that only writes it out (`echo "db:
/// $(...)"`, whose output nothing reads: `calls::only_prints_arguments`). s26's new user (16):
/// `state=$(redis-cli -h cache ping 2>/dev/null || echo DOWN); case "$state" in PONG) echo ok;;
/// *) echo degraded >&2;; esac; [ -e /proc/1/status ]` exits 0 / 0 in bash 5.2 and dash 0.5.12
/// and was denied: the check's `|| echo DOWN` ends its status's walk, and its output was taken
/// as read by any substitution whose variable is read at all. Or `NAME` is read only so and by
/// plain tests whose status is lost (`tested::value_only_tested`; s27: `x=$(C || echo DOWN); [
/// "$x" = PONG ] && echo ok; L` exits 0 / 0 in bash 5.2 and dash 0.5.12 and was denied; `[ "$x"
/// = PONG ] || exit 1` there is 0 / 1).
fn value_reaches_no_status(sub: Node<'_>, walk: &Walk<'_>) -> bool {
    let Some(rules) = walk.status.as_ref() else {
        return false;
    };
    let mut up = sub.parent();
    while let Some(u) = up.filter(|u| matches!(u.kind_name(), "string" | "concatenation")) {
        up = u.parent();
    }
    let Some(up) = up else {
        return false;
    };
    let funcs = || functions_at(sub, walk, rules);
    if let Some(case) = shapes::case_of_subject(sub, up) {
        return shapes::case_is_harmless(case, walk, &funcs(), |_| true);
    }
    if up.kind_name() == "command" {
        return up.child_by_field("name").is_some_and(|m| !m.byte_range().contains(&sub.start_byte()))
            && calls::only_prints_arguments(up, walk);
    }
    up.kind_name() == "variable_assignment"
        && up.parent().is_some_and(subst::assignment_statement_in)
        && up.child_by_field("value").is_some_and(|v| v.start_byte() <= sub.start_byte())
        && up.child_by_field("name").is_some_and(|name| {
            (harmless::only_echoed(name, walk)
                || shapes::only_case_subject(name, walk, &funcs())
                || only_tested(name, walk, rules))
                && (!rules.called || callers_never_name(name, walk, rules))
        })
}

/// `tested::value_only_tested` of the variable assigned at `name`, a node of the tree the walk
/// keeps (found there by its bytes; `false` when it keeps none).
fn only_tested(name: Node<'_>, walk: &Walk<'_>, rules: &Rules) -> bool {
    walk.top_functions
        .get(walk.tree.get())
        .and_then(|(root, _)| root.descendant_for_byte_range(name.start_byte(), name.end_byte()))
        .filter(|n| n.byte_range() == name.byte_range() && n.kind_name() == name.kind_name())
        .is_some_and(|n| tested::value_only_tested(n, walk, rules))
}

/// Whether every other mention of the variable assigned at `name` is outside the substitution
/// `sub` and only written out (`harmless::reads_only_as_output`: an `echo "$x"` whose output
/// nothing reads): s26, `set -e; x=$(redis-cli -h cache ping || echo down); echo "$x"; test -d
/// /` exits 0 / 0 in bash 5.2.15 and dash 0.5.12, while `...; [ "$x" != down ]` is 0 / 1. (A
/// mention inside `sub` would bring that look back here.)
fn only_printed_outside(name: Node<'_>, sub: Node<'_>, walk: &Walk<'_>) -> bool {
    super::tree::every_mention(name, walk, |k| {
        !(sub.start_byte() <= k.start_byte() && k.end_byte() <= sub.end_byte())
            && harmless::reads_only_as_output(k, walk)
    })
}

/// For the check `n` whose output [`output_used_above`] finds read, why that is only a doubt:
/// it is read along with a local check's ([`MERGED`]), or only chooses a `case` item
/// (`shapes::CASE_PATTERN`). `None`: the reader's status may follow the check's outcome.
pub(super) fn doubt_where_read(n: Node<'_>, walk: &Walk<'_>) -> Option<&'static str> {
    if merged_with_another_check(n, walk) {
        return Some(MERGED);
    }
    read_by_a_case_pattern(n, walk).then_some(shapes::CASE_PATTERN)
}

/// Whether the first reader of what the check `n` prints is a command substitution that is (part
/// of) a pattern of a `case` item: that output only chooses the item, and whether what the check
/// prints in an outage matches is a guess (`shapes::CASE_PATTERN`; s17: `case ok in $(pg_isready
/// -h db || echo down)) exit 1;; esac; exit 0` exits 0 / 0 in bash 5.2 and dash 0.5.12). Not when
/// it prints nothing there (`check >/dev/null || echo ok`: the pattern is known, 1 / 0).
fn read_by_a_case_pattern(n: Node<'_>, walk: &Walk<'_>) -> bool {
    if subst::writes_nothing_to_it(n, walk) {
        return false;
    }
    let mut child = n;
    while let Some(parent) = child.parent() {
        match parent.kind_name() {
            // (`{ check; } >/dev/null || echo ok`: the group prints nothing there.)
            "redirected_statement" if stdout_thrown_away(parent, walk) => return false,
            "command_substitution" => {
                let mut up = parent.parent();
                while let Some(u) = up.filter(|u| matches!(u.kind_name(), "string" | "concatenation")) {
                    up = u.parent();
                }
                return up.and_then(|up| subst::case_of_pattern(parent, up)).is_some();
            }
            "process_substitution" => return false,
            "redirected_statement" if writes_a_named_file(parent, walk) => return false,
            "pipeline" => {
                let mut c = parent.walk();
                if !parent
                    .named_children(&mut c)
                    .filter(|k| is_statement(*k) && k.start_byte() >= child.end_byte())
                    .all(|k| trivial_reader(k, walk))
                {
                    return false;
                }
            }
            _ => {}
        }
        child = parent;
    }
    false
}

/// Whether the redirections of `statement` send its standard output to `/dev/null`.
fn stdout_thrown_away(statement: Node<'_>, walk: &Walk<'_>) -> bool {
    let mut c = statement.walk();
    statement.children_by_field("redirect", &mut c).any(|r| {
        let t: String = text(r, walk).chars().filter(|c| !c.is_whitespace()).collect();
        matches!(t.as_str(), ">/dev/null" | "1>/dev/null" | "&>/dev/null" | ">&/dev/null" | ">>/dev/null")
    })
}

/// A reason the walk gives (`discarded`).
pub(super) const MERGED: &str = "its output is read together with another check's (`paste <(check) <(other)`), which may alone give the reader what it looks for, so whether an outage changes the outcome is not known";

/// Whether the check `n` is in a process substitution `<(...)` that a command reads along with
/// another one running a client on this Pod ([`plainly_local`]: `paste <(redis-cli -h cache ping) <(redis-cli ping) | grep -q
/// PONG`): what the reader finds may come from the other check alone (s17, vd3 ps20: bash 5.2
/// exits 0 / 0 with the cache down / up). Not for text the script writes itself (`<(echo done)`,
/// whose match the walk decides).
fn merged_with_another_check(n: Node<'_>, walk: &Walk<'_>) -> bool {
    let mut sub = n;
    while sub.kind_name() != "process_substitution" {
        match sub.parent() {
            Some(p) if !matches!(p.kind_name(), "command_substitution" | "program") => sub = p,
            _ => return false,
        }
    }
    let Some(reader) =
        sub.parent().filter(|r| r.kind_name() == "command" && text(sub, walk).starts_with("<("))
    else {
        return false;
    };
    let mut c = reader.walk();
    let others: Vec<Node<'_>> = reader
        .children_by_field("argument", &mut c)
        .filter(|a| *a != sub && a.kind_name() == "process_substitution" && text(*a, walk).starts_with("<("))
        .collect();
    others.into_iter().any(|other| {
        let mut runs_client = false;
        each_node(other, |k| {
            if k.kind_name() == "command"
                && let Some(name) = k.child_by_field("name").map(|m| text(m, walk))
            {
                let mut c = k.walk();
                let args: Vec<String> =
                    k.children_by_field("argument", &mut c).map(|a| text(a, walk).to_string()).collect();
                runs_client |= plainly_local(name, &args);
            }
        });
        runs_client
    })
}

/// Whether the client `name` run with `args` reaches this Pod as written: its row's default is
/// local, no environment variable can give it a host, no positional argument is a host, and every
/// host option's value is `localhost` or a loopback address (`redis-cli ping`, `redis-cli -h
/// 127.0.0.1 ping`; not `pg_isready`, which `PGHOST` may send elsewhere).
fn plainly_local(name: &str, args: &[String]) -> bool {
    use super::super::clients::{Positional, find_client};
    let Some(client) = find_client(name, args) else {
        return false;
    };
    let parsed = client.syntax.parse(args);
    client.default_local
        && client.env.is_empty()
        && client.positional == Positional::Ignored
        && client.always_opts.is_empty()
        && client.other_opts.is_empty()
        && client.config_opts.is_empty()
        && !args.iter().any(|a| a.contains(['$', '`', '@']) || a.contains("://"))
        && parsed.get(client.host_opts).iter().all(|h| constructs::local_word(h))
}
