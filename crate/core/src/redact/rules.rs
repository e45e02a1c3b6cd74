//! The rule catalogue: every rule's id (its placeholder type), its priority when two
//! findings overlap, and the key names that make a value secret whatever it looks like.

use serde::{Deserialize, Serialize};

/// One redaction rule. The id (`github_token` ...) is what a receipt records and what the
/// placeholder names: `[REDACTED:github_token]`. Ids are part of the public API (a changed
/// id is policy drift, seed 003): never rename one, only add new ones.
///
/// The declaration order is the priority when findings overlap: a specific token shape wins
/// over the generic rules (a `ghp_` token under a `token` key is a `github_token`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// `-----BEGIN ... PRIVATE KEY-----` blocks (RSA, EC, DSA, OpenSSH, PKCS#8, PGP).
    PrivateKey,
    /// Anthropic API keys (`sk-ant-...`).
    AnthropicKey,
    /// OpenAI API keys (`sk-...`, `sk-proj-...`, the `T3BlbkFJ` infix).
    OpenaiKey,
    /// GitHub tokens (`ghp_ gho_ ghu_ ghs_ ghr_ github_pat_`).
    GithubToken,
    /// AWS access key ids (`AKIA`, `ASIA` ... followed by 16 characters).
    AwsAccessKeyId,
    /// AWS secret access keys (40 characters) next to an access key id or under a key
    /// named like one.
    AwsSecretKey,
    /// Slack tokens (`xoxb-`, `xoxp-`, `xapp-` ...).
    SlackToken,
    /// Slack incoming-webhook paths (`hooks.slack.com/services/...`).
    SlackWebhook,
    /// Stripe secret and restricted keys, live and test (`sk_live_`, `rk_test_` ...), and
    /// webhook signing secrets (`whsec_`).
    StripeKey,
    /// Google API keys (`AIza` + 35 characters).
    GoogleApiKey,
    /// JSON Web Tokens (three base64url segments whose header is a JSON object with `alg`).
    Jwt,
    /// The credentials of `Bearer` authorization.
    BearerToken,
    /// The credentials of `Basic` authorization (base64 of `user:password`).
    BasicAuth,
    /// Any other `Authorization` header value.
    Authorization,
    /// `Cookie` and `Set-Cookie` values.
    Cookie,
    /// The password in a URL of any scheme (`postgres://user:PASSWORD@host`).
    UrlPassword,
    /// The value of a key or parameter named like a secret (`token`, `password`,
    /// `api_key`, `session`, `sig` ...), in JSON, query strings, env files, YAML, headers.
    SecretField,
    /// Card numbers that pass the Luhn check and have a card network's prefix.
    CardNumber,
    /// E-mail addresses (only when the policy asks).
    Email,
    /// US social security numbers in `123-45-6789` form (only when the policy asks).
    UsSsn,
}

impl Rule {
    pub const ALL: [Rule; 20] = [
        Rule::PrivateKey,
        Rule::AnthropicKey,
        Rule::OpenaiKey,
        Rule::GithubToken,
        Rule::AwsAccessKeyId,
        Rule::AwsSecretKey,
        Rule::SlackToken,
        Rule::SlackWebhook,
        Rule::StripeKey,
        Rule::GoogleApiKey,
        Rule::Jwt,
        Rule::BearerToken,
        Rule::BasicAuth,
        Rule::Authorization,
        Rule::Cookie,
        Rule::UrlPassword,
        Rule::SecretField,
        Rule::CardNumber,
        Rule::Email,
        Rule::UsSsn,
    ];

    /// The rule id, as receipts and placeholders spell it.
    pub fn id(self) -> &'static str {
        match self {
            Rule::PrivateKey => "private_key",
            Rule::AnthropicKey => "anthropic_key",
            Rule::OpenaiKey => "openai_key",
            Rule::GithubToken => "github_token",
            Rule::AwsAccessKeyId => "aws_access_key_id",
            Rule::AwsSecretKey => "aws_secret_key",
            Rule::SlackToken => "slack_token",
            Rule::SlackWebhook => "slack_webhook",
            Rule::StripeKey => "stripe_key",
            Rule::GoogleApiKey => "google_api_key",
            Rule::Jwt => "jwt",
            Rule::BearerToken => "bearer_token",
            Rule::BasicAuth => "basic_auth",
            Rule::Authorization => "authorization",
            Rule::Cookie => "cookie",
            Rule::UrlPassword => "url_password",
            Rule::SecretField => "secret_field",
            Rule::CardNumber => "card_number",
            Rule::Email => "email",
            Rule::UsSsn => "us_ssn",
        }
    }

    /// The rule with this id.
    pub fn parse(id: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|r| r.id() == id)
    }

    /// The typed placeholder that replaces a finding: `[REDACTED:github_token]`.
    pub fn placeholder(self) -> &'static str {
        match self {
            Rule::PrivateKey => "[REDACTED:private_key]",
            Rule::AnthropicKey => "[REDACTED:anthropic_key]",
            Rule::OpenaiKey => "[REDACTED:openai_key]",
            Rule::GithubToken => "[REDACTED:github_token]",
            Rule::AwsAccessKeyId => "[REDACTED:aws_access_key_id]",
            Rule::AwsSecretKey => "[REDACTED:aws_secret_key]",
            Rule::SlackToken => "[REDACTED:slack_token]",
            Rule::SlackWebhook => "[REDACTED:slack_webhook]",
            Rule::StripeKey => "[REDACTED:stripe_key]",
            Rule::GoogleApiKey => "[REDACTED:google_api_key]",
            Rule::Jwt => "[REDACTED:jwt]",
            Rule::BearerToken => "[REDACTED:bearer_token]",
            Rule::BasicAuth => "[REDACTED:basic_auth]",
            Rule::Authorization => "[REDACTED:authorization]",
            Rule::Cookie => "[REDACTED:cookie]",
            Rule::UrlPassword => "[REDACTED:url_password]",
            Rule::SecretField => "[REDACTED:secret_field]",
            Rule::CardNumber => "[REDACTED:card_number]",
            Rule::Email => "[REDACTED:email]",
            Rule::UsSsn => "[REDACTED:us_ssn]",
        }
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

/// What a key name says about its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyClass {
    /// The value is secret (rule to record).
    Secret(Rule),
    /// An `Authorization` header: the scheme word is kept, the credentials are not.
    Authorization,
    Plain,
}

/// Last words of a key name that make its value a secret.
const SECRET_WORDS: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "pwd",
    "pass",
    "passphrase",
    "apikey",
    "session",
    "sig",
    "signature",
    "credential",
    "credentials",
    "jwt",
    "bearer",
    "otp",
    "auth",
    "sessionid",
    "sessid",
    "privatekey",
];

/// Last two words (joined) that make its value a secret.
const SECRET_PAIRS: &[&str] = &[
    "apikey",
    "privatekey",
    "secretkey",
    "accesskey",
    "signingkey",
    "encryptionkey",
    "masterkey",
    "sessionid",
    "sessionkey",
    "authkey",
    "clientsecret",
    "licensekey",
];

/// Words before a final `token` that make it a pagination cursor, not a secret.
const CURSOR_WORDS: &[&str] = &[
    "page",
    "next",
    "prev",
    "previous",
    "continuation",
    "cursor",
    "sync",
    "pagination",
    "resume",
];

/// Endings of a single word that make it a password's name (`PGPASSWORD`).
const PASSWORD_SUFFIXES: &[&str] = &["password", "passwd", "passphrase"];

/// Longest key name classified whole; a longer one is classified by its last words.
const KEY_MAX: usize = 80;

/// The key itself, or for a key longer than [`KEY_MAX`] its last words (from the first
/// separator within its last `KEY_MAX` bytes): what a key's value is follows from how the
/// name ends, however long (`a_very_..._long_prefix_password`). `None` for one long word.
fn long_key_tail(key: &str) -> Option<&str> {
    if key.len() <= KEY_MAX {
        return Some(key);
    }
    let from = key.len() - KEY_MAX;
    let sep = key.as_bytes()[from..]
        .iter()
        .position(|b| !b.is_ascii_alphanumeric())?;
    Some(&key[from + sep + 1..])
}

/// Whether a secret key's name is explicit enough that a value of any length is the secret
/// (`password`, `PGPASSWORD`, `api_key`, `token`, `secret`), unlike short or ambiguous
/// names (`pass`, `sig`, `otp`, `auth`) whose one- or two-character values are usually
/// counts or flags.
pub(crate) fn strong_key(key: &str) -> bool {
    let Some(key) = long_key_tail(key) else {
        return false;
    };
    let words = key_words(key);
    let Some(last) = words.last() else {
        return false;
    };
    PASSWORD_SUFFIXES.iter().any(|p| last.ends_with(p))
        || matches!(
            last.as_str(),
            "pwd" | "secret" | "token" | "apikey" | "credential" | "credentials" | "privatekey"
        )
        || words.len() >= 2
            && matches!(
                words[words.len() - 2].as_str(),
                "api" | "private" | "secret"
            )
            && last == "key"
}

/// Splits a key into lowercase words at `_ - . space` and lower-to-upper case changes
/// (`nextPageToken` -> next, page, token).
pub(crate) fn key_words(key: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in key.chars() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        cur.push(c.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// Classifies a key name (a JSON key, a query parameter, an env variable, a header name).
/// `extra` are the policy's additional secret key names, compared without case and
/// separators.
pub(crate) fn classify_key(key: &str, extra: &[String]) -> KeyClass {
    let key = match long_key_tail(key) {
        Some(k) => k,
        None => return KeyClass::Plain,
    };
    let words = key_words(key);
    let Some(last) = words.last() else {
        return KeyClass::Plain;
    };
    let compact: String = words.concat();
    if extra.contains(&compact) {
        return KeyClass::Secret(Rule::SecretField);
    }
    match compact.as_str() {
        "authorization" | "proxyauthorization" => return KeyClass::Authorization,
        "cookie" | "setcookie" | "cookies" => return KeyClass::Secret(Rule::Cookie),
        _ => {}
    }
    if compact.contains("secretaccesskey") || compact == "awssecretkey" {
        return KeyClass::Secret(Rule::AwsSecretKey);
    }
    let n = words.len();
    let pair = (n >= 2).then(|| format!("{}{}", words[n - 2], words[n - 1]));
    if last == "token" && n >= 2 && CURSOR_WORDS.contains(&words[n - 2].as_str()) {
        return KeyClass::Plain;
    }
    // `session` alone names a secret; `session_count`, `session_url` do not (last word).
    // A word that ends in `password` is one (`PGPASSWORD`, `dbpassword`).
    if SECRET_WORDS.contains(&last.as_str())
        || PASSWORD_SUFFIXES.iter().any(|p| last.ends_with(p))
        || pair.as_deref().is_some_and(|p| SECRET_PAIRS.contains(&p))
        || SECRET_PAIRS.contains(&compact.as_str())
    {
        return KeyClass::Secret(Rule::SecretField);
    }
    KeyClass::Plain
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_placeholders_name_them() {
        for rule in Rule::ALL {
            assert_eq!(Rule::parse(rule.id()), Some(rule));
            assert_eq!(rule.placeholder(), format!("[REDACTED:{}]", rule.id()));
        }
    }

    #[test]
    fn key_names() {
        let secret = |k: &str| !matches!(classify_key(k, &[]), KeyClass::Plain);
        for k in [
            "token",
            "access_token",
            "accessToken",
            "GITHUB_TOKEN",
            "OPENAI_API_KEY",
            "api_key",
            "x-api-key",
            "apiKey",
            "client_secret",
            "password",
            "DB_PASS",
            "session",
            "sessionId",
            "session_id",
            "sig",
            "X-Amz-Signature",
            "private_key",
            "AWS_SECRET_ACCESS_KEY",
            "Authorization",
            "Cookie",
            "Set-Cookie",
            "refresh_token",
            "id_token",
            "credentials",
        ] {
            assert!(secret(k), "{k} should be secret");
        }
        for k in [
            "max_tokens",
            "prompt_tokens",
            "token_count",
            "token_type",
            "tokenizer",
            "next_page_token",
            "nextPageToken",
            "secret_name",
            "password_policy",
            "session_count",
            "bypass",
            "passed",
            "key",
            "id",
            "sha256",
            "status",
            "signature_algorithm",
            "AWSAccessKeyId",
        ] {
            assert!(!secret(k), "{k} should be plain");
        }
        assert_eq!(
            classify_key("aws_secret_access_key", &[]),
            KeyClass::Secret(Rule::AwsSecretKey)
        );
        assert_eq!(
            classify_key("pin_code", &["pincode".into()]),
            KeyClass::Secret(Rule::SecretField)
        );
    }
}
