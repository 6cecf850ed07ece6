//! A tiny HTTP/1.1 server on 127.0.0.1 for the web tools' tests: canned routes,
//! delays, redirects and endless bodies, with no web framework and no internet.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[derive(Clone, Default)]
pub struct Route {
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
    pub headers: Vec<(String, String)>,
    /// Wait this long before answering.
    pub delay: Duration,
    /// After the body, keep sending data until the client hangs up.
    pub endless: bool,
}

impl Route {
    pub fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Route { status: 200, content_type: Some(content_type.into()), body: body.into(), ..Route::default() }
    }

    pub fn status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }

    pub fn redirect(to: &str) -> Self {
        Route { status: 302, headers: vec![("Location".into(), to.into())], ..Route::default() }
    }

    pub fn delayed(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    pub fn endless(mut self) -> Self {
        self.endless = true;
        self
    }
}

pub struct TestServer {
    pub addr: SocketAddr,
    requests: Arc<Mutex<Vec<String>>>,
}

impl TestServer {
    /// Serves `routes` (by path, query ignored) until the test's runtime ends.
    pub async fn start(routes: Vec<(&str, Route)>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let routes: Arc<HashMap<String, Route>> =
            Arc::new(routes.into_iter().map(|(p, r)| (p.to_string(), r)).collect());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                tokio::spawn(serve(socket, routes.clone(), seen.clone()));
            }
        });
        TestServer { addr, requests }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Request targets seen so far (`/path?query`), in order.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

async fn serve(mut socket: TcpStream, routes: Arc<HashMap<String, Route>>, seen: Arc<Mutex<Vec<String>>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match socket.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let head = String::from_utf8_lossy(&buf).to_string();
    let target = head.split_whitespace().nth(1).unwrap_or("/").to_string();
    seen.lock().unwrap().push(target.clone());
    let path = target.split('?').next().unwrap_or("/");
    let route = routes.get(path).cloned().unwrap_or_else(|| {
        Route::ok("text/html", "<html><body><h1>Not Found</h1><p>no such page</p></body></html>").status(404)
    });
    tokio::time::sleep(route.delay).await;
    let mut response = format!("HTTP/1.1 {} Canned\r\nConnection: close\r\n", route.status);
    if let Some(ct) = &route.content_type {
        response.push_str(&format!("Content-Type: {ct}\r\n"));
    }
    for (k, v) in &route.headers {
        response.push_str(&format!("{k}: {v}\r\n"));
    }
    if !route.endless {
        response.push_str(&format!("Content-Length: {}\r\n", route.body.len()));
    }
    response.push_str("\r\n");
    if socket.write_all(response.as_bytes()).await.is_err() || socket.write_all(&route.body).await.is_err() {
        return;
    }
    if route.endless {
        let filler = vec![b'z'; 64 * 1024];
        while socket.write_all(&filler).await.is_ok() {}
    }
    let _ = socket.shutdown().await;
}
