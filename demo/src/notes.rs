//! An in-memory notes API: list with paging, get, create, search. Notes are kept, so memory
//! grows with every note written (or seeded with `--seed-notes`).

use std::sync::{Arc, RwLock};

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

use crate::App;

/// Notes on one page of the list.
const PAGE: usize = 50;

#[derive(Clone, Serialize)]
pub struct Note {
    id: u64,
    group: u64,
    title: String,
    body: String,
}

#[derive(Default)]
pub struct Notes {
    all: RwLock<Vec<Note>>,
}

/// `size` bytes of letters, shifted by `id` so no two notes share their text.
fn body(id: u64, size: usize) -> String {
    const LETTERS: &str = "abcdefghijklmnopqrstuvwxyz";
    let shift = (id % 26) as usize;
    let mut body = String::with_capacity(size + 26);
    body.push_str(&LETTERS[shift..]);
    while body.len() < size {
        body.push_str(LETTERS);
    }
    body.truncate(size);
    body
}

/// The memory `count` seeded notes of `size` bytes take, about: the body, its spare capacity,
/// the title and the note itself (128 bytes past the body).
pub fn seed_bytes(count: u64, size: u64) -> u64 {
    count.saturating_mul(size.saturating_add(128))
}

impl Notes {
    /// `count` notes with bodies of `size` bytes, every byte written so the memory is resident.
    pub fn seeded(count: u64, size: u64) -> Notes {
        let all = (0..count)
            .map(|id| Note {
                id,
                group: 1,
                title: format!("seeded note {id}"),
                body: body(id, size as usize),
            })
            .collect();
        Notes {
            all: RwLock::new(all),
        }
    }

    pub fn len(&self) -> usize {
        self.all.read().map_or(0, |all| all.len())
    }

    pub fn bytes(&self) -> u64 {
        self.all.read().map_or(0, |all| {
            all.iter()
                .map(|n| (n.title.len() + n.body.len()) as u64)
                .sum()
        })
    }
}

/// The CPU an API request costs: `--request-cpu-each` on a thread of its own, in parallel
/// with the others (the API scales with its cores), then `--request-cpu` one request at a
/// time: requests queue for the one worker as they would on a single-threaded server, so the
/// API answers at most one request per `request_cpu` and its latency is that service time
/// plus the queue.
pub(crate) async fn serve(app: &App) {
    let each = app.options.request_cpu_each.as_std();
    if !each.is_zero() {
        // Counted on the thread's own CPU clock: a request costs this much of a core
        // however many share it.
        let _ = tokio::task::spawn_blocking(move || crate::busy_cpu(each)).await;
    }
    let work = app.options.request_cpu.as_std();
    if work.is_zero() {
        return;
    }
    let _worker = app.api_worker.lock().await;
    let _ = tokio::task::spawn_blocking(move || crate::busy(work)).await;
}

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/api/groups/{group}/notes", get(list).post(create))
        .route("/api/groups/{group}/notes/{id}", get(one))
}

#[derive(Deserialize)]
struct ListQuery {
    page: Option<usize>,
    q: Option<String>,
}

#[derive(Serialize)]
struct Page {
    notes: Vec<Note>,
    page: usize,
    total: usize,
}

async fn list(
    State(app): State<Arc<App>>,
    Path(group): Path<u64>,
    Query(query): Query<ListQuery>,
) -> Result<Json<Page>, StatusCode> {
    app.metrics.request("list");
    serve(&app).await;
    let all = app
        .notes
        .all
        .read()
        .map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?;
    let matching: Vec<&Note> = all
        .iter()
        .filter(|n| n.group == group)
        .filter(|n| {
            query
                .q
                .as_ref()
                .is_none_or(|q| n.title.contains(q) || n.body.contains(q))
        })
        .collect();
    let page = query.page.unwrap_or(1).max(1);
    let notes = matching
        .iter()
        .skip((page - 1) * PAGE)
        .take(PAGE)
        .map(|n| (*n).clone())
        .collect();
    Ok(Json(Page {
        notes,
        page,
        total: matching.len(),
    }))
}

async fn one(
    State(app): State<Arc<App>>,
    Path((group, id)): Path<(u64, u64)>,
) -> Result<Json<Note>, StatusCode> {
    app.metrics.request("get");
    serve(&app).await;
    let all = app
        .notes
        .all
        .read()
        .map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?;
    all.iter()
        .find(|n| n.id == id && n.group == group)
        .cloned()
        .map(Json)
        .ok_or(StatusCode::NOT_FOUND)
}

/// A note to create, as both stores take it.
#[derive(Deserialize)]
pub(crate) struct NewNote {
    pub(crate) title: String,
    #[serde(default)]
    pub(crate) body: String,
}

#[derive(Serialize)]
struct Created {
    id: u64,
}

async fn create(
    State(app): State<Arc<App>>,
    Path(group): Path<u64>,
    Json(new): Json<NewNote>,
) -> Result<(StatusCode, Json<Created>), StatusCode> {
    app.metrics.request("create");
    serve(&app).await;
    let mut all = app
        .notes
        .all
        .write()
        .map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?;
    let id = all.len() as u64;
    all.push(Note {
        id,
        group,
        title: new.title,
        body: new.body,
    });
    Ok((StatusCode::CREATED, Json(Created { id })))
}
