//! A real S3 server on loopback for tests: moto (PyPI `moto[server]`, installed by .ci/run),
//! driven by boto3 as the reference client. With authentication on, a user with full access
//! is created first and its keys are the ones boto3 uses.
#![allow(dead_code)]

use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running moto server.
pub struct Moto {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// The access key and secret key that work (`test`/`test` without authentication).
    pub keys: (String, String),
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts moto; with `auth`, requests must be signed with [`Moto::keys`] (moto's IAM
/// checks, after the few unauthenticated calls that create the user).
pub async fn moto(auth: bool) -> Moto {
    let port = free_port();
    let mut cmd = Command::new("python3");
    cmd.args([
        "-m",
        "moto.server",
        "-H",
        "127.0.0.1",
        "-p",
        &port.to_string(),
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    if auth {
        // create_user, put_user_policy and create_access_key go unauthenticated.
        cmd.env("INITIAL_NO_AUTH_ACTION_COUNT", "3");
    }
    let child = cmd
        .spawn()
        .expect("python3 with moto[server] is required by this test (installed by .ci/run)");
    let mut m = Moto {
        child,
        port,
        keys: ("test".into(), "test".into()),
    };
    let mut up = false;
    for _ in 0..150 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        up,
        "moto did not start on port {port} (is moto[server] installed?)"
    );
    if auth {
        let keys = m.python(
            "iam = boto3.client('iam', endpoint_url=ep, aws_access_key_id='x', aws_secret_access_key='x', region_name='us-east-1')\niam.create_user(UserName='flux')\niam.put_user_policy(UserName='flux', PolicyName='all', PolicyDocument=json.dumps({'Version': '2012-10-17', 'Statement': [{'Effect': 'Allow', 'Action': '*', 'Resource': '*'}]}))\nk = iam.create_access_key(UserName='flux')['AccessKey']\nprint(json.dumps([k['AccessKeyId'], k['SecretAccessKey']]))",
        );
        m.keys = (
            keys[0].as_str().unwrap().to_string(),
            keys[1].as_str().unwrap().to_string(),
        );
    }
    m
}

impl Moto {
    /// `host:port` of the server.
    pub fn endpoint(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Runs a Python script with `boto3`, `json`, `hashlib`, `ep` (the endpoint URL) and `s3`
    /// (a client with [`Moto::keys`]); the script prints JSON.
    pub fn python(&self, script: &str) -> serde_json::Value {
        let prelude = format!(
            "import boto3, json, hashlib\nep = 'http://127.0.0.1:{}'\ns3 = boto3.client('s3', endpoint_url=ep, aws_access_key_id='{}', aws_secret_access_key='{}', region_name='us-east-1')\n",
            self.port, self.keys.0, self.keys.1
        );
        let out = Command::new("python3")
            .args(["-c", &format!("{prelude}{script}")])
            .output()
            .expect("python3 with boto3 is required by this test");
        assert!(
            out.status.success(),
            "boto3: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// Starts recording the requests the server receives.
    pub fn start_recording(&self) {
        self.python("import urllib.request\nurllib.request.urlopen(urllib.request.Request(ep + '/moto-api/recorder/reset-recording', method='POST'))\nurllib.request.urlopen(urllib.request.Request(ep + '/moto-api/recorder/start-recording', method='POST'))\nprint('null')");
    }

    /// Stops recording; the method and path of every request recorded.
    pub fn recorded(&self) -> Vec<String> {
        let v = self.python("import urllib.request\nurllib.request.urlopen(urllib.request.Request(ep + '/moto-api/recorder/stop-recording', method='POST'))\nlines = urllib.request.urlopen(ep + '/moto-api/recorder/download-recording').read().decode().splitlines()\nfrom urllib.parse import urlparse\nout = []\nfor l in lines:\n    if l.strip():\n        r = json.loads(l)\n        out.append(r.get('method', '') + ' ' + urlparse(r.get('url', '')).path)\nprint(json.dumps(out))");
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    }
}
