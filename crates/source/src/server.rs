//! The artifact server: serves the store over HTTP, as source-controller's file server does.
//!
//! `GET /<kind>/<namespace>/<name>/<file>` streams the file; paths leaving the store, directories
//! and missing files are 404. `GET /` answers 200 (readiness probe).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path as UrlPath, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::storage::Storage;

/// Builds the router serving `storage`.
pub fn router(storage: Arc<Storage>) -> axum::Router {
    axum::Router::new()
        .route("/", get(|| async { "ok" }))
        .route("/{*path}", get(serve))
        .with_state(storage)
}

/// Binds `addr` and serves the store until the future is dropped. Returns the bound address
/// (useful with port 0) and the serving future.
pub async fn bind(
    storage: Arc<Storage>,
    addr: SocketAddr,
) -> std::io::Result<(
    SocketAddr,
    impl std::future::Future<Output = std::io::Result<()>>,
)> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let app = router(storage);
    Ok((local, async move { axum::serve(listener, app).await }))
}

async fn serve(State(storage): State<Arc<Storage>>, UrlPath(path): UrlPath<String>) -> Response {
    let Ok(file_path): Result<PathBuf, _> = storage.local_path(&path) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let file = match tokio::fs::File::open(&file_path).await {
        Ok(f) => f,
        Err(_) => return StatusCode::NOT_FOUND.into_response(),
    };
    let meta = match file.metadata().await {
        Ok(m) if m.is_file() => m,
        _ => return StatusCode::NOT_FOUND.into_response(),
    };
    let content_type = if path.ends_with(".tar.gz") || path.ends_with(".tgz") {
        "application/gzip"
    } else {
        "application/octet-stream"
    };
    let body = Body::from_stream(tokio_util::io::ReaderStream::new(file));
    (
        [
            (header::CONTENT_TYPE, content_type.to_string()),
            (header::CONTENT_LENGTH, meta.len().to_string()),
        ],
        body,
    )
        .into_response()
}
