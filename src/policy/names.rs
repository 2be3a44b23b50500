//! Bounds on the names a policy gives its own parts (an override's `name`).

/// Longest override `name`, in characters: 253, the longest name a Kubernetes object may have
/// (a DNS subdomain, RFC 1123; Kubernetes "Object Names and IDs"). The name appears in every
/// decision's log line, in `GET /policy` and in the "policy in force" line; until s24 it had no
/// bound, so a policy could make each of those lines as long as it liked (log fields were cut at
/// 253 characters, `/policy` was not).
pub const MAX_OVERRIDE_NAME_CHARS: usize = 253;

/// Why an override `name` is too long to accept, or `None` when it is at most
/// [`MAX_OVERRIDE_NAME_CHARS`] characters. The message shows its first 40 characters.
pub(super) fn override_name_too_long(name: &str) -> Option<String> {
    let chars = name.chars().count();
    (chars > MAX_OVERRIDE_NAME_CHARS).then(|| {
        format!(
            "is {chars} characters long ({:?}), over the {MAX_OVERRIDE_NAME_CHARS} a name may have (a Kubernetes object name's limit): give the override a shorter name",
            crate::engine::excerpt(name, 40)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_of_253_characters_is_accepted_and_one_more_is_refused() {
        assert_eq!(override_name_too_long(&"a".repeat(253)), None);
        // Characters, not bytes: 253 two-byte characters are accepted.
        assert_eq!(override_name_too_long(&"é".repeat(253)), None);
        let message = override_name_too_long(&"a".repeat(254)).unwrap();
        assert!(message.starts_with("is 254 characters long (\"aaaa"), "{message}");
        assert!(message.contains("over the 253"), "{message}");
    }
}
