//! The notes API kept in PostgreSQL (`--database URL`): the same routes as the in-memory
//! notes, served from a pool of `--pool` connections, every one opened at start and held, so
//! the database sees exactly that many clients from this process.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use serde::{Deserialize, Serialize};

use crate::App;
use crate::notes::NewNote;

/// Notes on one page of the list.
const PAGE: i64 = 50;

/// The pool of connections to the notes database.
pub struct Database {
    pool: Pool,
}

/// The table the notes live in; made at start when it is not there.
const SCHEMA: &str = "create table if not exists notes (
    id bigserial primary key,
    group_id bigint not null,
    title text not null,
    body text not null default ''
);
create index if not exists notes_group on notes (group_id, id);";

impl Database {
    /// Connects `size` connections to `url` (a `postgres://` URL or `key=value` pairs) and
    /// keeps them open; makes the notes table.
    pub async fn connect(url: &str, size: u32) -> std::io::Result<Database> {
        let invalid = |what: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, what);
        let config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| invalid(format!("--database {url}: {e}")))?;
        let manager = Manager::from_config(
            config,
            tokio_postgres::NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let size = usize::try_from(size.max(1)).unwrap_or(1);
        let pool = Pool::builder(manager)
            .max_size(size)
            .build()
            .map_err(|e| invalid(format!("--pool {size}: {e}")))?;
        let unavailable = |e: deadpool_postgres::PoolError| {
            std::io::Error::other(format!("--database {url}: {e}"))
        };
        // Every connection opened now and held together, then returned to the pool, where
        // they stay open: the pool is its full size from the start.
        let mut held = Vec::with_capacity(size);
        for _ in 0..size {
            held.push(pool.get().await.map_err(unavailable)?);
        }
        held[0]
            .batch_execute(SCHEMA)
            .await
            .map_err(|e| std::io::Error::other(format!("cannot make the notes table: {e}")))?;
        drop(held);
        Ok(Database { pool })
    }
}

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/api/groups/{group}/notes", get(list).post(create))
        .route("/api/groups/{group}/notes/{id}", get(one))
}

#[derive(Serialize)]
struct Note {
    id: i64,
    group: i64,
    title: String,
    body: String,
}

impl From<&tokio_postgres::Row> for Note {
    fn from(row: &tokio_postgres::Row) -> Note {
        Note {
            id: row.get(0),
            group: row.get(1),
            title: row.get(2),
            body: row.get(3),
        }
    }
}

#[derive(Deserialize)]
struct ListQuery {
    page: Option<i64>,
    q: Option<String>,
}

#[derive(Serialize)]
struct Page {
    notes: Vec<Note>,
    page: i64,
    total: i64,
}

fn database(app: &App) -> Result<&Database, StatusCode> {
    app.database
        .as_ref()
        .ok_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// A failed query is a 500, and said on stderr.
fn failed(e: impl std::fmt::Display) -> StatusCode {
    eprintln!("query failed: {e}");
    StatusCode::INTERNAL_SERVER_ERROR
}

async fn list(
    State(app): State<Arc<App>>,
    Path(group): Path<i64>,
    Query(query): Query<ListQuery>,
) -> Result<Json<Page>, StatusCode> {
    app.metrics.request("list");
    crate::notes::serve(&app).await;
    let client = database(&app)?.pool.get().await.map_err(failed)?;
    let page = query.page.unwrap_or(1).max(1);
    let pattern = query.q.as_ref().map(|q| format!("%{q}%"));
    let rows = client
        .query(
            "select id, group_id, title, body, count(*) over () from notes
             where group_id = $1 and ($2::text is null or title like $2 or body like $2)
             order by id limit $3 offset $4",
            &[&group, &pattern, &PAGE, &((page - 1) * PAGE)],
        )
        .await
        .map_err(failed)?;
    let total = rows.first().map_or(0, |row| row.get::<_, i64>(4));
    Ok(Json(Page {
        notes: rows.iter().map(Note::from).collect(),
        page,
        total,
    }))
}

async fn one(
    State(app): State<Arc<App>>,
    Path((group, id)): Path<(i64, i64)>,
) -> Result<Json<Note>, StatusCode> {
    app.metrics.request("get");
    crate::notes::serve(&app).await;
    let client = database(&app)?.pool.get().await.map_err(failed)?;
    let row = client
        .query_opt(
            "select id, group_id, title, body from notes where group_id = $1 and id = $2",
            &[&group, &id],
        )
        .await
        .map_err(failed)?;
    row.as_ref()
        .map(Note::from)
        .map(Json)
        .ok_or(StatusCode::NOT_FOUND)
}

#[derive(Serialize)]
struct Created {
    id: i64,
}

async fn create(
    State(app): State<Arc<App>>,
    Path(group): Path<i64>,
    Json(new): Json<NewNote>,
) -> Result<(StatusCode, Json<Created>), StatusCode> {
    app.metrics.request("create");
    crate::notes::serve(&app).await;
    let client = database(&app)?.pool.get().await.map_err(failed)?;
    let row = client
        .query_one(
            "insert into notes (group_id, title, body) values ($1, $2, $3) returning id",
            &[&group, &new.title, &new.body],
        )
        .await
        .map_err(failed)?;
    Ok((StatusCode::CREATED, Json(Created { id: row.get(0) })))
}
