//! GDIDs in an axum service (docs/how-to/web-frameworks.md): the id as a path parameter
//! (`GET /orders/{id}`, the colon text or the 24 hex digits) and as a JSON field (`"id"`,
//! `"customer_id"`), and a bad id in either answered 400 with a message that names it. The
//! orders are kept in memory; the ids come from the store `GDID_ID_STORE` names (a SQLite file
//! by default).
//!
//! ```sh
//! cargo run -p gdid-examples --example web_axum     # serves on 127.0.0.1:3000
//! cargo test -p gdid-examples --example web_axum    # its answers checked, on a free port
//! ```

use std::collections::BTreeMap;
use std::error::Error;
use std::sync::{Arc, Mutex};

use axum::extract::rejection::{JsonRejection, PathRejection};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use gdid::{BlockGenerator, Gdid, Store};
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;

/// An order. Serialized, `id` and `customer_id` are strings: `"0:1:7"`, the colon text. A
/// JSON number could not hold a GDID (96 bits), and JavaScript's numbers stop at 2^53.
#[derive(Clone, Serialize)]
struct Order {
    id: Gdid,
    customer_id: Gdid,
    total_cents: i64,
}

/// The body of `POST /orders`. A `Gdid` field reads the colon text or the 24 hex digits.
#[derive(Deserialize)]
struct NewOrder {
    customer_id: Gdid,
    total_cents: i64,
}

#[derive(Clone)]
struct AppState {
    ids: BlockGenerator,
    orders: Arc<Mutex<BTreeMap<Gdid, Order>>>,
}

/// `GET /orders/{id}`. `Path<Gdid>` parses the id; taking the `Result` lets the handler answer
/// a bad one with its own error body.
async fn get_order(
    State(state): State<AppState>,
    id: Result<Path<Gdid>, PathRejection>,
) -> Result<Json<Order>, ApiError> {
    let Path(id) = id?;
    let orders = state.orders.lock().expect("orders lock");
    let order = orders.get(&id).ok_or(ApiError::NotFound(id))?;
    Ok(Json(order.clone()))
}

/// `POST /orders`: a bad `customer_id` is a 400 that names the field.
async fn create_order(
    State(state): State<AppState>,
    body: Result<Json<NewOrder>, JsonRejection>,
) -> Result<(StatusCode, Json<Order>), ApiError> {
    let Json(new) = body?;
    let order = Order {
        id: state.ids.next_id().await?,
        customer_id: new.customer_id,
        total_cents: new.total_cents,
    };
    let mut orders = state.orders.lock().expect("orders lock");
    orders.insert(order.id, order.clone());
    Ok((StatusCode::CREATED, Json(order)))
}

/// Every error a handler answers, as `{"error": "…"}`.
enum ApiError {
    BadRequest(String),
    NotFound(Gdid),
    Unavailable(gdid::Error),
}

impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> ApiError {
        // "Invalid URL: Cannot parse `id` with value `1:99:5`: GDID parsing failed: the authority
        // segment at byte 2 is out of range: the maximum is 15"
        ApiError::BadRequest(rejection.body_text())
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> ApiError {
        // "Failed to deserialize the JSON body into the target type: customer_id: GDID parsing
        // failed: …": the field is named
        ApiError::BadRequest(rejection.body_text())
    }
}

impl From<gdid::Error> for ApiError {
    fn from(e: gdid::Error) -> ApiError {
        ApiError::Unavailable(e)
    }
}

#[derive(Serialize)]
struct ErrorBody {
    error: String,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, error) = match self {
            ApiError::BadRequest(message) => (StatusCode::BAD_REQUEST, message),
            ApiError::NotFound(id) => (StatusCode::NOT_FOUND, format!("no order {id}")),
            ApiError::Unavailable(e) => {
                eprintln!("no order id: {e}"); // the cause is for the log, not the client
                (StatusCode::SERVICE_UNAVAILABLE, "no id: try again".into())
            }
        };
        (status, Json(ErrorBody { error })).into_response()
    }
}

fn routes(state: AppState) -> Router {
    Router::new()
        .route("/orders", post(create_order))
        .route("/orders/{id}", get(get_order))
        .with_state(state)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    // Built once at start-up; every request shares it (a clone is a pointer).
    let store = Store::open(&gdid_examples::id_store()?).await?;
    let state = AppState {
        ids: store.block_generator("shop", "orders").build()?,
        orders: Arc::default(),
    };
    let listener = TcpListener::bind("127.0.0.1:3000").await?;
    println!("serving on http://{}", listener.local_addr()?);
    axum::serve(listener, routes(state.clone()))
        .with_graceful_shutdown(async {
            tokio::signal::ctrl_c().await.ok();
        })
        .await?;
    // The ids reserved and not issued go back to the store.
    let returned = state.ids.close().await?;
    println!("stopped; {returned} unused ids given back");
    Ok(())
}

/// The checks every web example passes (`gdid_examples::web_api_check`), on a free port:
/// `cargo test -p gdid-examples --example web_axum`.
#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_api_answers_as_documented() -> Result<(), Box<dyn Error>> {
        let store = Store::open("memory:").await?;
        let state = AppState {
            ids: store.block_generator("shop", "orders").build()?,
            orders: Arc::default(),
        };
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let server = tokio::spawn(axum::serve(listener, routes(state)).into_future());
        let checked = gdid_examples::web_api_check(addr).await;
        server.abort();
        checked
    }
}
