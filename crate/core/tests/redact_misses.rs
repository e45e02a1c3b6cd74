//! Secrets the redactor used to let through in text (issue 13, item 2), each in the form a
//! tool prints it, with the literal one-character values of the report and realistic ones;
//! and the look-alikes next to them that must stay.

use toolslice::redact::Redactor;

/// (text, the secret that must not survive).
fn misses() -> Vec<(String, &'static str)> {
    let long_key = format!(
        "{}_password",
        "service_account_for_the_nightly_reporting_job".repeat(2)
    );
    assert!(long_key.len() > 80);
    let mut v: Vec<(String, &'static str)> = Vec::new();
    for pw in ["x", "Zq8#mW2!vR"] {
        v.extend([
            (format!("PGPASSWORD={pw} psql -h db"), pw),
            (format!("export PGPASSWORD={pw}\n"), pw),
            (format!("mysqldump --password {pw} app > dump.sql"), pw),
            (format!("run --user admin --password '{pw}' --verbose"), pw),
            (format!(":password => \"{pw}\""), pw),
            (format!("{{ :user => \"bob\", :password => \"{pw}\" }}"), pw),
            (format!("$config['password'] => '{pw}'"), pw),
            (format!("body: {{\"password\": [\"{pw}\"]}}"), pw),
            (
                format!("body: {{\"password\": {{\"value\": \"{pw}\"}}}}"),
                pw,
            ),
            (
                format!("{{\"user\": \"bob\", \"password\": [\"{pw}\", \"{pw}\"], \"ok\": true}}"),
                pw,
            ),
            (format!("{long_key}={pw}\n"), pw),
            (format!("{{\"{long_key}\": \"{pw}\"}}"), pw),
        ]);
    }
    v.extend([
        ("mysql -uroot -pS3cr3tPw -h db app".to_string(), "S3cr3tPw"),
        ("mysql -u root -p'S3cr3t Pw' app".to_string(), "S3cr3t Pw"),
        // A password written right after a placeholder: the placeholder does not make the
        // value a dummy (it used to, and `hunter22` was left in place).
        ("password=[REDACTED:x]hunter22 next".to_string(), "hunter22"),
        ("password=[REDACTED]hunter22\n".to_string(), "hunter22"),
        (
            "{\"token\": \"[REDACTED:secret_field]Zq8mW2vRtY\"}".to_string(),
            "Zq8mW2vRtY",
        ),
        // A token used as a URL's user name, beside a password (the user name was skipped).
        (
            "git clone https://ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5:x-oauth@github.com/o/r"
                .to_string(),
            "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
        ),
        ("DB_PASSWORD=$xK9mQ2pLw7\n".to_string(), "$xK9mQ2pLw7"),
        ("DB_PASSWORD=$xK9mQ2pLw7 ./run".to_string(), "xK9mQ2pLw7"),
        (
            "data:text/plain;base64,ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5".to_string(),
            "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
        ),
        (
            "src=data:application/octet-stream;base64,AKIAQ3EGRIVPZ7NHK2JD end".to_string(),
            "AKIAQ3EGRIVPZ7NHK2JD",
        ),
        (
            "data:;base64,sk-proj-Qw3rTy8uIoP1aSdFgHjKl2ZxCvBnM4qWeRtYuIoPaS5dFgHjKlZxC"
                .to_string(),
            "Qw3rTy8uIoP1aSdFgHjKl2ZxCvBnM4qWe",
        ),
    ]);
    v
}

#[test]
fn the_reported_misses_are_redacted() {
    let r = Redactor::default();
    for (text, secret) in misses() {
        let out = r.text(&text);
        let rest = out.text.replace("[REDACTED:", "");
        let leaked = if secret.len() == 1 {
            // A one-character secret: the value position must hold a placeholder.
            !out.text.contains("[REDACTED:") || rest.contains(&format!("\"{secret}\""))
        } else {
            rest.contains(secret)
        };
        assert!(!leaked, "{text:?} -> {:?}", out.text);
        assert!(!out.receipts.is_empty(), "{text:?}");
        // Idempotent.
        assert_eq!(r.text(&out.text).text, out.text, "{text:?}");
    }
}

#[test]
fn containers_stay_json() {
    let r = Redactor::default();
    let t = r#"{"user": "bob", "password": {"value": "hunter22", "n": 42, "keep": true}, "ok": 1}"#;
    let out = r.text(t);
    let v: serde_json::Value = serde_json::from_str(&out.text).unwrap();
    assert_eq!(v["password"]["value"], "[REDACTED:secret_field]");
    assert_eq!(v["password"]["n"], "[REDACTED:secret_field]");
    assert_eq!(v["password"]["keep"], true);
    assert_eq!(v["ok"], 1);
    assert_eq!(v["user"], "bob");
}

#[test]
fn look_alikes_stay() {
    let r = Redactor::default();
    for text in [
        "mkdir -p build && cp -pR src dst",
        "ssh -p2222 host; docker run -p8080:80 img",
        "tar -pxf a.tgz",
        "export GITHUB_TOKEN=$GH_TOKEN",
        "password: $password",
        "tests: pass=12 fail=0",
        "use --password-file FILE; see --token-help",
        "password: [see docs]",
        "x == y, a => b, :status => \"ok\"",
        "<img src=\"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==\">",
        "password: xxxx",
        // Placeholders alone stay as they are: redacting a redacted text changes nothing.
        "password=[REDACTED:secret_field] next",
        "password=[REDACTED]",
        "{\"token\": \"[REDACTED:secret_field]\"}",
    ] {
        let out = r.text(text);
        assert_eq!(out.text, text, "{text:?}");
    }
}
