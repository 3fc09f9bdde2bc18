//! Kubeconfigs read from Secrets (`spec.kubeConfig.secretRef` of Kustomizations and
//! HelmReleases, Cluster API's `<cluster>-kubeconfig`): the one place that turns them into
//! clients, and refuses what would let whoever wrote the Secret act on the controller's host.
//!
//! As Flux's `runtime/client` (KubeConfigFromBytes, ValidateKubeConfig, KubeConfig):
//! credentials and certificates must be inline; a file reference (`tokenFile`,
//! `client-certificate`, `client-key`, `certificate-authority`) would read the controller's
//! own files, and is refused with Flux's words. An `exec` section or an `auth-provider` would
//! run a command (or a plugin) as the controller: refused unless the controller runs with
//! `--insecure-kubeconfig-exec`; `insecure-skip-tls-verify: true` unless
//! `--insecure-kubeconfig-tls`. Flux drops those two silently and the request then fails
//! without credentials or on the certificate; Tidegate says why instead.

use kube::config::{KubeConfigOptions, Kubeconfig};

/// What kubeconfigs read from Secrets may do (Flux's `--insecure-kubeconfig-exec` and
/// `--insecure-kubeconfig-tls`; both off by default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SecretKubeConfigOptions {
    /// Allow `user.exec` and `user.auth-provider` (they run commands on this host).
    pub insecure_exec: bool,
    /// Allow `cluster.insecure-skip-tls-verify: true`.
    pub insecure_tls: bool,
}

/// Reads a kubeconfig from a Secret's bytes and checks every cluster and user entry.
pub fn parse(bytes: &[u8], options: SecretKubeConfigOptions) -> Result<Kubeconfig, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "the kubeconfig is not UTF-8".to_string())?;
    tidegate_core::yaml::check_nesting(text).map_err(|e| format!("invalid kubeconfig: {e}"))?;
    let kc = Kubeconfig::from_yaml(text).map_err(|e| format!("invalid kubeconfig: {e}"))?;
    validate(&kc, options)?;
    Ok(kc)
}

/// Refuses file references always, and exec plugins, auth providers and disabled TLS
/// verification unless `options` allow them.
pub fn validate(kc: &Kubeconfig, options: SecretKubeConfigOptions) -> Result<(), String> {
    for named in &kc.clusters {
        let name = &named.name;
        let Some(cluster) = &named.cluster else {
            return Err(format!("cluster '{name}' is nil"));
        };
        if cluster
            .certificate_authority
            .as_deref()
            .is_some_and(|s| !s.is_empty())
        {
            return Err(format!(
                "cluster '{name}' references a certificate-authority file, only certificate-authority-data is supported"
            ));
        }
        if cluster.insecure_skip_tls_verify == Some(true) && !options.insecure_tls {
            return Err(format!(
                "cluster '{name}' sets insecure-skip-tls-verify, which is not allowed (the controller allows it with --insecure-kubeconfig-tls)"
            ));
        }
    }
    for named in &kc.auth_infos {
        let name = &named.name;
        let Some(user) = &named.auth_info else {
            return Err(format!("user '{name}' is nil"));
        };
        let set = |v: &Option<String>| v.as_deref().is_some_and(|s| !s.is_empty());
        if set(&user.token_file) {
            return Err(format!(
                "user '{name}' references a tokenFile, only an inline token is supported"
            ));
        }
        if set(&user.client_certificate) {
            return Err(format!(
                "user '{name}' references a client-certificate file, only client-certificate-data is supported"
            ));
        }
        if set(&user.client_key) {
            return Err(format!(
                "user '{name}' references a client-key file, only client-key-data is supported"
            ));
        }
        if !options.insecure_exec {
            if user.exec.is_some() {
                return Err(format!(
                    "user '{name}' has an exec section, which runs a command on the controller's host and is not allowed (the controller allows it with --insecure-kubeconfig-exec)"
                ));
            }
            if let Some(provider) = &user.auth_provider {
                return Err(format!(
                    "user '{name}' has an auth-provider ({}), which is not allowed (the controller allows it with --insecure-kubeconfig-exec)",
                    provider.name
                ));
            }
        }
    }
    Ok(())
}

/// The client configuration of a kubeconfig read from a Secret, checked by [`validate`].
pub async fn client_config(
    bytes: &[u8],
    options: SecretKubeConfigOptions,
) -> Result<kube::Config, String> {
    let kc = parse(bytes, options)?;
    kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CA: &str = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==";

    fn kubeconfig(cluster: &str, user: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n- name: c\n  context: {{cluster: k, user: u}}\nclusters:\n- name: k\n  cluster:\n    server: https://127.0.0.1:1\n{cluster}users:\n- name: u\n  user:\n{user}"
        )
    }

    fn check(cluster: &str, user: &str, options: SecretKubeConfigOptions) -> Result<(), String> {
        parse(kubeconfig(cluster, user).as_bytes(), options).map(|_| ())
    }

    const NONE: SecretKubeConfigOptions = SecretKubeConfigOptions {
        insecure_exec: false,
        insecure_tls: false,
    };
    const ALL: SecretKubeConfigOptions = SecretKubeConfigOptions {
        insecure_exec: true,
        insecure_tls: true,
    };

    #[test]
    fn inline_credentials_are_accepted() {
        let cluster = format!("    certificate-authority-data: {CA}\n");
        check(&cluster, "    token: abc\n", NONE).unwrap();
        check("", "    username: a\n    password: b\n", NONE).unwrap();
    }

    #[test]
    fn file_references_are_refused_whatever_the_flags() {
        for (cluster, user, message) in [
            (
                "    certificate-authority: /etc/ca.crt\n",
                "    token: t\n",
                "cluster 'k' references a certificate-authority file, only certificate-authority-data is supported",
            ),
            (
                "",
                "    tokenFile: /var/run/secrets/token\n",
                "user 'u' references a tokenFile, only an inline token is supported",
            ),
            (
                "",
                "    client-certificate: /tmp/c.crt\n    client-key-data: eA==\n",
                "user 'u' references a client-certificate file, only client-certificate-data is supported",
            ),
            (
                "",
                "    client-certificate-data: eA==\n    client-key: /tmp/c.key\n",
                "user 'u' references a client-key file, only client-key-data is supported",
            ),
        ] {
            assert_eq!(check(cluster, user, NONE).unwrap_err(), message);
            assert_eq!(check(cluster, user, ALL).unwrap_err(), message);
        }
    }

    #[test]
    fn exec_and_auth_providers_need_the_flag() {
        let exec = "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: sh\n      args: [-c, 'touch /tmp/owned']\n";
        let e = check("", exec, NONE).unwrap_err();
        assert!(e.starts_with("user 'u' has an exec section"), "{e}");
        assert!(e.contains("--insecure-kubeconfig-exec"), "{e}");
        check("", exec, ALL).unwrap();
        let gcp = "    auth-provider:\n      name: gcp\n      config:\n        cmd-path: /bin/sh\n        cmd-args: -c id\n";
        let e = check("", gcp, NONE).unwrap_err();
        assert!(e.starts_with("user 'u' has an auth-provider (gcp)"), "{e}");
        check("", gcp, ALL).unwrap();
    }

    #[test]
    fn skipping_tls_verification_needs_the_flag() {
        let cluster = "    insecure-skip-tls-verify: true\n";
        let e = check(cluster, "    token: t\n", NONE).unwrap_err();
        assert!(e.contains("--insecure-kubeconfig-tls"), "{e}");
        check(cluster, "    token: t\n", ALL).unwrap();
        check(
            "    insecure-skip-tls-verify: false\n",
            "    token: t\n",
            NONE,
        )
        .unwrap();
    }

    #[test]
    fn every_entry_is_checked_not_only_the_current_context() {
        let text = format!(
            "{}- name: other\n  user:\n    tokenFile: /etc/shadow\n",
            kubeconfig("", "    token: t\n")
        );
        assert_eq!(
            parse(text.as_bytes(), ALL).unwrap_err(),
            "user 'other' references a tokenFile, only an inline token is supported"
        );
    }

    #[test]
    fn bad_bytes_are_named() {
        assert_eq!(
            parse(&[0xff, 0xfe], NONE).unwrap_err(),
            "the kubeconfig is not UTF-8"
        );
        let deep = format!("clusters: {}", "[".repeat(100_000));
        let e = parse(deep.as_bytes(), NONE).unwrap_err();
        assert!(e.starts_with("invalid kubeconfig:"), "{e}");
    }
}
