//! The orders service of the tutorial (docs/tutorial.md): an axum server whose `orders` table is
//! keyed by GDIDs. `POST /orders` issues an id, inserts the row and answers it as JSON;
//! `GET /orders/{id}` reads it back. The ids and the rows are in one SQLite file,
//! `orders.sqlite` in the current folder unless `DATABASE_URL` names another `sqlite:` URL.
//!
//! ```sh
//! cargo run -p gdid-examples --example tutorial_orders            # serves on 127.0.0.1:3000
//! curl -H 'Content-Type: application/json' -d '{"customer":"Ada","total_cents":1999}' \
//!     http://127.0.0.1:3000/orders
//! curl http://127.0.0.1:3000/orders/0:1:1
//!
//!
//! # The tutorial's steps, checked: a server on a free port, its answers, a restart.
//! cargo test -p gdid-examples --example tutorial_orders
//! ```

use std::error::Error;
use std::future::Future;
use std::str::FromStr;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use gdid::engine::IdOrder;
use gdid::{BlockGenerator, Gdid, Store};
use serde::{Deserialize, Serialize};
use sqlx::SqlitePool;
use sqlx::sqlite::SqliteConnectOptions;
use tokio::net::TcpListener;

/// The orders table. The id column holds the GDID's 12 bytes, whose byte order is the ids'
/// order: `ORDER BY id` lists the orders in the order they were created.
const CREATE_ORDERS: &str = "CREATE TABLE IF NOT EXISTS orders (
    id          BLOB    NOT NULL PRIMARY KEY,
    customer    TEXT    NOT NULL,
    total_cents INTEGER NOT NULL
)";

/// What every handler shares: the id generator and the database pool. Both are cheap to clone.
#[derive(Clone)]
struct App {
    ids: BlockGenerator,
    db: SqlitePool,
}

impl App {
    /// Opens the database, creates the table and builds the generator: once, at start-up.
    async fn start(database_url: &str) -> Result<App, Box<dyn Error>> {
        // The id store: creates the file and its gdid_counters table, and records authority 1.
        let store = Store::open(database_url).await?;
        // One generator per sequence, for the whole process.
        let ids = store
            .block_generator("shop", "orders")
            .order(IdOrder::Strict)
            .build()?;

        // The application's own pool, on the same file.
        let options = SqliteConnectOptions::from_str(database_url)?.create_if_missing(true);
        let db = SqlitePool::connect_with(options).await?;
        sqlx::query(CREATE_ORDERS).execute(&db).await?;
        Ok(App { ids, db })
    }
}

/// The body of `POST /orders`.
#[derive(Deserialize)]
struct NewOrder {
    customer: String,
    total_cents: i64,
}

/// An order as the API answers it: `id` is the colon text, `"0:1:7"`.
#[derive(Serialize)]
struct Order {
    id: Gdid,
    customer: String,
    total_cents: i64,
}

fn routes(app: App) -> Router {
    Router::new()
        .route("/orders", post(create_order))
        .route("/orders/{id}", get(get_order))
        .with_state(app)
}

async fn create_order(
    State(app): State<App>,
    Json(new): Json<NewOrder>,
) -> Result<(StatusCode, Json<Order>), ApiError> {
    let id = app.ids.next_id().await?; // from memory, almost always
    sqlx::query("INSERT INTO orders (id, customer, total_cents) VALUES (?, ?, ?)")
        .bind(id)
        .bind(&new.customer)
        .bind(new.total_cents)
        .execute(&app.db)
        .await?;
    let order = Order {
        id,
        customer: new.customer,
        total_cents: new.total_cents,
    };
    Ok((StatusCode::CREATED, Json(order)))
}

async fn get_order(
    State(app): State<App>,
    Path(id): Path<String>,
) -> Result<Json<Order>, ApiError> {
    // The colon text or the 24 hex digits: both name the same id.
    let id: Gdid = id
        .parse()
        .map_err(|e| ApiError::BadId(format!("{id:?} is not an order id: {e}")))?;
    let row: Option<(Gdid, String, i64)> =
        sqlx::query_as("SELECT id, customer, total_cents FROM orders WHERE id = ?")
            .bind(id)
            .fetch_optional(&app.db)
            .await?;
    let (id, customer, total_cents) = row.ok_or(ApiError::NotFound(id))?;
    Ok(Json(Order {
        id,
        customer,
        total_cents,
    }))
}

/// What a handler can fail with, and the status it answers.
enum ApiError {
    BadId(String),
    NotFound(Gdid),
    Ids(gdid::Error),
    Database(sqlx::Error),
}

impl From<gdid::Error> for ApiError {
    fn from(e: gdid::Error) -> ApiError {
        ApiError::Ids(e)
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(e: sqlx::Error) -> ApiError {
        ApiError::Database(e)
    }
}

#[derive(Serialize)]
struct ErrorBody {
    error: String,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, message) = match self {
            ApiError::BadId(message) => (StatusCode::BAD_REQUEST, message),
            ApiError::NotFound(id) => (StatusCode::NOT_FOUND, format!("no order {id}")),
            // No block could be had: the store is down beyond the generator's cover.
            ApiError::Ids(e) if e.kind().is_transient() => {
                eprintln!("no order id: {e}");
                (StatusCode::SERVICE_UNAVAILABLE, "try again later".into())
            }
            ApiError::Ids(e) => {
                eprintln!("no order id: {e}");
                (StatusCode::INTERNAL_SERVER_ERROR, "internal error".into())
            }
            ApiError::Database(e) => {
                eprintln!("database: {e}");
                (StatusCode::INTERNAL_SERVER_ERROR, "internal error".into())
            }
        };
        (status, Json(ErrorBody { error: message })).into_response()
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let database_url =
        std::env::var("DATABASE_URL").unwrap_or_else(|_| "sqlite:orders.sqlite".to_owned());
    let app = App::start(&database_url).await?;
    let listener = TcpListener::bind("127.0.0.1:3000").await?;
    println!("orders service on http://{}", listener.local_addr()?);
    serve(listener, app, ctrl_c()).await
}

/// Serves until `stop` completes, then gives the ids reserved and not issued back to the store.
async fn serve(
    listener: TcpListener,
    app: App,
    stop: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Box<dyn Error>> {
    axum::serve(listener, routes(app.clone()))
        .with_graceful_shutdown(stop)
        .await?;
    let returned = app.ids.close().await?;
    println!("stopped; {returned} unused ids given back");
    Ok(())
}

async fn ctrl_c() {
    tokio::signal::ctrl_c().await.ok();
}

/// The tutorial's steps, checked (`cargo test -p gdid-examples --example tutorial_orders`). Not
/// part of the tutorial.
#[cfg(test)]
mod tests {
    use std::error::Error;
    use std::net::SocketAddr;

    use gdid::Gdid;
    use gdid_examples::{expect, http_call};
    use serde_json::Value;
    use tokio::net::TcpListener;
    use tokio::sync::oneshot;
    use tokio::task::JoinHandle;

    use super::App;

    /// A server of the example on a free port, stopped by `stop`.
    struct Running {
        addr: SocketAddr,
        stop: oneshot::Sender<()>,
        task: JoinHandle<Result<(), String>>,
    }

    async fn start(database_url: &str) -> Result<Running, Box<dyn Error>> {
        let app = App::start(database_url).await?;
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            super::serve(listener, app, async {
                stopped.await.ok();
            })
            .await
            .map_err(|e| e.to_string())
        });
        Ok(Running { addr, stop, task })
    }

    impl Running {
        async fn stop(self) -> Result<(), Box<dyn Error>> {
            self.stop.send(()).ok();
            self.task.await??;
            Ok(())
        }
    }

    fn id_of(order: &Value) -> Result<Gdid, Box<dyn Error>> {
        Ok(order["id"].as_str().ok_or("an order without id")?.parse()?)
    }

    /// The steps on a SQLite file of their own, removed afterwards.
    #[tokio::test]
    async fn the_tutorial_steps() -> Result<(), Box<dyn Error>> {
        let file =
            gdid_examples::data_dir()?.join(format!("tutorial-{}.sqlite", std::process::id()));
        let database_url = format!("sqlite:{}", file.display());
        let result = steps(&database_url).await;
        for suffix in ["", "-wal", "-shm"] {
            std::fs::remove_file(format!("{}{suffix}", file.display())).ok();
        }
        result
    }

    async fn steps(database_url: &str) -> Result<(), Box<dyn Error>> {
        let ada = r#"{"customer":"Ada","total_cents":1999}"#;
        let grace = r#"{"customer":"Grace","total_cents":450}"#;
        let server = start(database_url).await?;
        let addr = server.addr;
        let (status, first) = http_call(addr, "POST", "/orders", Some(ada)).await?;
        expect("POST /orders answers 201", status == 201)?;
        let (_, second) = http_call(addr, "POST", "/orders", Some(grace)).await?;
        let (first_id, second_id) = (id_of(&first)?, id_of(&second)?);
        expect("the second id follows the first", second_id > first_id)?;

        let (status, found) = http_call(addr, "GET", &format!("/orders/{first_id}"), None).await?;
        expect(
            "GET by colon text finds the order",
            status == 200 && found == first,
        )?;
        let by_hex = format!("/orders/{second_id:x}");
        let (status, found) = http_call(addr, "GET", &by_hex, None).await?;
        expect(
            "GET by hex finds the order",
            status == 200 && found == second,
        )?;
        let (status, error) = http_call(addr, "GET", "/orders/not-an-id", None).await?;
        expect(
            "a bad id is 400 with a message",
            status == 400
                && error["error"]
                    .as_str()
                    .is_some_and(|m| m.contains("not-an-id")),
        )?;
        let (status, _) = http_call(addr, "GET", "/orders/0:1:999999", None).await?;
        expect("an unknown id is 404", status == 404)?;
        server.stop().await?;

        // A restart on the same file: the ids go on after the last one, never again from 1.
        let server = start(database_url).await?;
        let (_, third) = http_call(server.addr, "POST", "/orders", Some(ada)).await?;
        let third_id = id_of(&third)?;
        expect(
            "after a clean stop the next id follows the last",
            third_id.counter() == second_id.counter() + 1,
        )?;
        server.stop().await?;
        Ok(())
    }
}
