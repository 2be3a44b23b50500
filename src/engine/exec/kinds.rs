//! The name of a syntax node's kind without asking tree-sitter for it: `Node::kind` reads the
//! grammar's C string (a `strlen` and a UTF-8 check, about 190 instructions a call, some 220
//! calls for one evaluation of a 190-byte probe script); [`KindName::kind_name`] looks the
//! node's kind id up in [`KINDS`], a copy of tree-sitter-bash 0.25.1's symbol names
//! (`ts_symbol_names` in its `src/parser.c`), checked against the grammar by the tests below.

use tree_sitter::Node;

/// The name of each symbol of tree-sitter-bash 0.25.1, by id (`Language::node_kind_for_id`).
/// A node's kind id (`Node::kind_id`) is its public symbol, whose name is the node's kind.
const KINDS: [&str; 280] = [
    "end",
    "word",
    "for",
    "select",
    "in",
    "((",
    "))",
    ";",
    ",",
    "=",
    "++",
    "--",
    "+=",
    "-=",
    "*=",
    "/=",
    "%=",
    "**=",
    "<<=",
    ">>=",
    "&=",
    "^=",
    "|=",
    "||",
    "-o",
    "&&",
    "-a",
    "|",
    "^",
    "&",
    "==",
    "!=",
    "<",
    ">",
    "<=",
    ">=",
    "<<",
    ">>",
    "+",
    "-",
    "*",
    "/",
    "%",
    "**",
    "(",
    ")",
    "word",
    "while",
    "until",
    "do",
    "done",
    "if",
    "then",
    "fi",
    "elif",
    "else",
    "case",
    "esac",
    ";;",
    ";&",
    ";;&",
    "function",
    "{",
    "}",
    "|&",
    "!",
    "[",
    "]",
    "[[",
    "]]",
    "declare",
    "typeset",
    "export",
    "readonly",
    "local",
    "unset",
    "unsetenv",
    "=~",
    "&>",
    "&>>",
    "<&",
    ">&",
    ">|",
    "<&-",
    ">&-",
    "<<-",
    "heredoc_redirect_token1",
    "<<<",
    "?",
    ":",
    "++",
    "--",
    "-",
    "+",
    "~",
    "$((",
    "$[",
    "number",
    "..",
    "}",
    "``",
    "$",
    "_special_character",
    "\"",
    "string_content",
    "raw_string",
    "ansi_c_string",
    "number_token1",
    "number_token2",
    "#",
    "${",
    "}",
    "!",
    "@",
    "*",
    "#",
    "=",
    ":=",
    "-",
    ":-",
    "+",
    ":+",
    "?",
    ":?",
    "%%",
    "regex",
    "//",
    "/#",
    "/%",
    ",,",
    "^^",
    "U",
    "u",
    "L",
    "Q",
    "E",
    "P",
    "A",
    "K",
    "a",
    "k",
    "$(",
    "`",
    "$`",
    "<(",
    ">(",
    "comment",
    "word",
    "variable_name",
    "variable_name",
    "special_variable_name",
    "special_variable_name",
    "heredoc_start",
    "heredoc_body",
    "_heredoc_body_beginning",
    "heredoc_content",
    "heredoc_end",
    "file_descriptor",
    "_empty_value",
    "_concat",
    "variable_name",
    "test_operator",
    "regex",
    "regex",
    "regex",
    "word",
    "extglob_pattern",
    "$",
    "{",
    "##",
    "#",
    "!",
    "=",
    "__error_recovery",
    "program",
    "_statements",
    "_terminated_statement",
    "_statement_not_pipeline",
    "redirected_statement",
    "for_statement",
    "c_style_for_statement",
    "_for_body",
    "_c_expression",
    "_c_expression_not_assignment",
    "variable_assignment",
    "unary_expression",
    "binary_expression",
    "postfix_expression",
    "parenthesized_expression",
    "while_statement",
    "do_group",
    "if_statement",
    "elif_clause",
    "else_clause",
    "case_statement",
    "case_item",
    "case_item",
    "function_definition",
    "compound_statement",
    "subshell",
    "pipeline",
    "list",
    "negated_command",
    "test_command",
    "binary_expression",
    "declaration_command",
    "unset_command",
    "command",
    "command_name",
    "variable_assignment",
    "variable_assignments",
    "subscript",
    "file_redirect",
    "heredoc_redirect",
    "pipeline",
    "_heredoc_expression",
    "_heredoc_command",
    "_heredoc_body",
    "heredoc_body",
    "_simple_heredoc_body",
    "herestring_redirect",
    "_expression",
    "binary_expression",
    "ternary_expression",
    "unary_expression",
    "postfix_expression",
    "parenthesized_expression",
    "arithmetic_expansion",
    "brace_expression",
    "_arithmetic_expression",
    "_arithmetic_literal",
    "binary_expression",
    "ternary_expression",
    "unary_expression",
    "postfix_expression",
    "parenthesized_expression",
    "concatenation",
    "string",
    "translated_string",
    "array",
    "number",
    "simple_expansion",
    "expansion",
    "_expansion_body",
    "_expansion_expression",
    "_expansion_regex",
    "_expansion_regex_replacement",
    "_expansion_regex_removal",
    "_expansion_max_length",
    "_expansion_max_length_expression",
    "binary_expression",
    "_expansion_operator",
    "concatenation",
    "command_substitution",
    "process_substitution",
    "_extglob_blob",
    "_c_terminator",
    "_statements_repeat1",
    "redirected_statement_repeat1",
    "redirected_statement_repeat2",
    "for_statement_repeat1",
    "_for_body_repeat1",
    "if_statement_repeat1",
    "case_statement_repeat1",
    "case_item_repeat1",
    "compound_statement_repeat1",
    "pipeline_repeat1",
    "declaration_command_repeat1",
    "unset_command_repeat1",
    "command_repeat1",
    "command_repeat2",
    "variable_assignments_repeat1",
    "heredoc_body_repeat1",
    "_literal_repeat1",
    "arithmetic_expansion_repeat1",
    "concatenation_repeat1",
    "string_repeat1",
    "_expansion_body_repeat1",
    "_expansion_regex_repeat1",
    "_concatenation_in_expansion_repeat1",
];

/// The name of each field of tree-sitter-bash 0.25.1, by id minus one (`ts_field_names` in its
/// `src/parser.c`; id 0 is no field), checked against the grammar by the tests below.
const FIELDS: [&str; 19] = [
    "alternative",
    "argument",
    "body",
    "condition",
    "consequence",
    "descriptor",
    "destination",
    "fallthrough",
    "index",
    "initializer",
    "left",
    "name",
    "operator",
    "redirect",
    "right",
    "termination",
    "update",
    "value",
    "variable",
];

/// The field id of `name` ([`FIELDS`]), `None` for a name the grammar has not. A call with a
/// literal is folded to its id when inlined: `Node::child_by_field_name` compares the name with
/// each of the grammar's field names on every call (`ts_language_field_id_for_name`).
#[inline]
fn field_id(name: &str) -> Option<std::num::NonZeroU16> {
    let mut i = 0;
    while i < FIELDS.len() {
        if FIELDS[i].len() == name.len() && FIELDS[i].as_bytes() == name.as_bytes() {
            return std::num::NonZeroU16::new(i as u16 + 1);
        }
        i += 1;
    }
    None
}

/// [`Node::kind`], read from [`KINDS`]; and a node's children by field, the field's id read
/// from [`FIELDS`].
pub(super) trait KindName<'t>: Sized {
    /// The node's kind, as `Node::kind` gives it (`"command"`, `"ERROR"`, `"&&"`).
    fn kind_name(&self) -> &'static str;
    /// The child in field `name`, as `Node::child_by_field_name` gives it (`"body"`, `"name"`).
    fn child_by_field(&self, name: &str) -> Option<Self>;
    /// The children in field `name`, as `Node::children_by_field_name` gives them.
    fn children_by_field<'c>(
        self,
        name: &str,
        cursor: &'c mut tree_sitter::TreeCursor<'t>,
    ) -> impl Iterator<Item = Self> + 'c;
}

impl<'t> KindName<'t> for Node<'t> {
    #[inline]
    fn kind_name(&self) -> &'static str {
        name_of(self.kind_id())
    }

    #[inline]
    fn child_by_field(&self, name: &str) -> Option<Self> {
        self.child_by_field_id(field_id(name)?.get())
    }

    #[inline]
    fn children_by_field<'c>(
        self,
        name: &str,
        cursor: &'c mut tree_sitter::TreeCursor<'t>,
    ) -> impl Iterator<Item = Self> + 'c {
        let id = field_id(name);
        let mut children = id.map(|id| self.children_by_field_id(id, cursor));
        std::iter::from_fn(move || children.as_mut()?.next())
    }
}

/// The name of kind id `id`: tree-sitter's error symbols (`u16::MAX`, `u16::MAX - 1`) are not
/// in the grammar's table.
#[inline]
fn name_of(id: u16) -> &'static str {
    match KINDS.get(usize::from(id)) {
        Some(name) => name,
        None if id == u16::MAX => "ERROR",
        None => "_ERROR",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_the_grammar_s() {
        let language: tree_sitter::Language = tree_sitter_bash::LANGUAGE.into();
        assert_eq!(language.node_kind_count(), KINDS.len());
        for (id, name) in KINDS.iter().enumerate() {
            let id = u16::try_from(id).unwrap();
            assert_eq!(language.node_kind_for_id(id), Some(*name), "kind id {id}");
        }
        assert_eq!(language.node_kind_for_id(u16::MAX), Some("ERROR"));
        assert_eq!(language.field_count(), FIELDS.len());
        for (id, name) in FIELDS.iter().enumerate() {
            let id = u16::try_from(id + 1).unwrap();
            assert_eq!(language.field_name_for_id(id), Some(*name), "field id {id}");
            assert_eq!(field_id(name), language.field_id_for_name(name), "field {name}");
        }
        assert_eq!(field_id("no_such_field"), None);
        assert_eq!(name_of(u16::MAX), "ERROR");
        assert_eq!(name_of(u16::MAX - 1), "_ERROR");
    }

    /// Every node of scripts with every construct the analysis reads, and with errors, is named
    /// as `Node::kind` names it.
    #[test]
    fn every_node_is_named_as_tree_sitter_names_it() {
        let scripts = [
            "password_aux=\"${MYSQL_ROOT_PASSWORD:-}\"\nif [[ -f \"${F:-}\" ]]; then\n  p=$(cat \"$F\")\nfi\nmysqladmin status -uroot -p\"${p}\"",
            "set -eo pipefail; f() { curl -sf http://db:5432 || exit 1; }; f & wait; x=`redis-cli ping` | true",
            "case $x in a|b) echo 1 ;& *) echo 2 ;;& esac; while read l; do echo $((l+1)); done < <(ls) > >(cat)",
            "cat <<EOF\n$HOME\nEOF\necho ${a//b/c} ${#a} ${a:1:2} {1..3} $'x' \"a\"'b' 2>&1 >>f <<< s",
            "for ((i=0;i<3;i++)); do [ -n \"$(x)\" ] && test 1 -eq 1 || ! true; done; declare -a a=(1 2); a[1]=x",
            "echo ${ ; if then fi fi ) (( [[ \"",
            "a=$(; `` $( $(( )) ${x",
        ];
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&tree_sitter_bash::LANGUAGE.into()).unwrap();
        let mut seen = 0;
        let mut errors = 0;
        for s in scripts {
            let tree = parser.parse(s, None).unwrap();
            let mut cursor = tree.walk();
            loop {
                let n = cursor.node();
                assert_eq!(n.kind_name(), n.kind(), "{s:?} at {}", n.start_byte());
                seen += 1;
                errors += usize::from(n.kind() == "ERROR");
                if cursor.goto_first_child() || cursor.goto_next_sibling() {
                    continue;
                }
                while cursor.goto_parent() && !cursor.goto_next_sibling() {}
                if cursor.node() == tree.root_node() {
                    break;
                }
            }
        }
        assert!(seen > 300 && errors > 0, "{seen} nodes, {errors} errors");
    }
}
