//! Sign-in for flows that log in, then browse: `POST /api/login` with an email and password
//! answers a session token, and `GET /api/me` with `Authorization: Bearer TOKEN` answers who
//! that is. The password of every account is `secret-` and its email: a test knows which logins
//! must pass and which must fail.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

use crate::App;

/// The sessions signed in: token → email.
#[derive(Default)]
pub(crate) struct Sessions {
    by_token: RwLock<HashMap<String, String>>,
    issued: AtomicU64,
}

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/api/login", post(login))
        .route("/api/me", get(me))
}

#[derive(Deserialize)]
struct Login {
    email: String,
    password: String,
}

#[derive(Serialize)]
struct Session {
    token: String,
}

#[derive(Serialize)]
struct Me {
    email: String,
}

async fn login(
    State(app): State<Arc<App>>,
    Json(login): Json<Login>,
) -> Result<Json<Session>, StatusCode> {
    app.metrics.request("login");
    if login.password != format!("secret-{}", login.email) {
        return Err(StatusCode::UNAUTHORIZED);
    }
    let sessions = &app.sessions;
    let token = format!(
        "tok-{}",
        sessions.issued.fetch_add(1, Ordering::Relaxed) + 1
    );
    sessions
        .by_token
        .write()
        .map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?
        .insert(token.clone(), login.email);
    Ok(Json(Session { token }))
}

async fn me(State(app): State<Arc<App>>, headers: HeaderMap) -> Result<Json<Me>, StatusCode> {
    app.metrics.request("me");
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .ok_or(StatusCode::UNAUTHORIZED)?;
    let email = app
        .sessions
        .by_token
        .read()
        .map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?
        .get(token)
        .cloned()
        .ok_or(StatusCode::UNAUTHORIZED)?;
    Ok(Json(Me { email }))
}
