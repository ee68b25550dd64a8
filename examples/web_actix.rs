//! GDIDs in an actix-web service (docs/how-to/web-frameworks.md): the same API as `web_axum`,
//! the id as a path parameter (`GET /orders/{id}`, the colon text or the 24 hex digits) and as a
//! JSON field, and a bad id in either answered 400 with a message. The orders are kept in
//! memory; the ids come from the store `GDID_ID_STORE` names (a SQLite file by default).
//!
//! ```sh
//! cargo run -p gdid-examples --example web_actix     # serves on 127.0.0.1:3000
//! cargo test -p gdid-examples --example web_actix    # its answers checked, on a free port
//! ```

use std::collections::BTreeMap;
use std::error::Error;
use std::fmt;
use std::sync::Mutex;

use actix_web::http::StatusCode;
use actix_web::{App, HttpResponse, HttpServer, ResponseError, web};
use gdid::{BlockGenerator, Gdid, Store};
use serde::{Deserialize, Serialize};

/// An order; `id` and `customer_id` are written as the colon text, `"0:1:7"`.
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

struct AppState {
    ids: BlockGenerator,
    orders: Mutex<BTreeMap<Gdid, Order>>,
}

/// `GET /orders/{id}`: `web::Path<Gdid>` parses the id; a bad one never reaches the handler
/// (see `PathConfig` below).
async fn get_order(
    state: web::Data<AppState>,
    id: web::Path<Gdid>,
) -> Result<web::Json<Order>, ApiError> {
    let id = id.into_inner();
    let orders = state.orders.lock().expect("orders lock");
    let order = orders.get(&id).ok_or(ApiError::NotFound(id))?;
    Ok(web::Json(order.clone()))
}

async fn create_order(
    state: web::Data<AppState>,
    new: web::Json<NewOrder>,
) -> Result<HttpResponse, ApiError> {
    let order = Order {
        id: state.ids.next_id().await?,
        customer_id: new.customer_id,
        total_cents: new.total_cents,
    };
    let mut orders = state.orders.lock().expect("orders lock");
    orders.insert(order.id, order.clone());
    Ok(HttpResponse::Created().json(order))
}

/// Every error a handler answers, as `{"error": "…"}`.
#[derive(Debug)]
enum ApiError {
    BadRequest(String),
    NotFound(Gdid),
    Unavailable(gdid::Error),
}

impl From<gdid::Error> for ApiError {
    fn from(e: gdid::Error) -> ApiError {
        ApiError::Unavailable(e)
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApiError::BadRequest(message) => f.write_str(message),
            ApiError::NotFound(id) => write!(f, "no order {id}"),
            ApiError::Unavailable(_) => f.write_str("no id: try again"),
        }
    }
}

#[derive(Serialize)]
struct ErrorBody {
    error: String,
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    fn error_response(&self) -> HttpResponse {
        if let ApiError::Unavailable(e) = self {
            eprintln!("no order id: {e}"); // the cause is for the log, not the client
        }
        HttpResponse::build(self.status_code()).json(ErrorBody {
            error: self.to_string(),
        })
    }
}

/// The routes, and a 400 in our error body for a bad id in the path or the JSON body (actix-web
/// answers a path that does not parse with 404, and both in plain text, by default).
fn routes(config: &mut web::ServiceConfig) {
    config
        .app_data(
            web::PathConfig::default()
                .error_handler(|e, _request| ApiError::BadRequest(e.to_string()).into()),
        )
        .app_data(
            web::JsonConfig::default()
                .error_handler(|e, _request| ApiError::BadRequest(e.to_string()).into()),
        )
        .route("/orders", web::post().to(create_order))
        .route("/orders/{id}", web::get().to(get_order));
}

#[actix_web::main]
async fn main() -> Result<(), Box<dyn Error>> {
    // Built once at start-up; `web::Data` is an `Arc`, shared by every worker.
    let store = Store::open(&gdid_examples::id_store()?).await?;
    let state = web::Data::new(AppState {
        ids: store.block_generator("shop", "orders").build()?,
        orders: Mutex::default(),
    });
    let app_state = state.clone();
    let server = HttpServer::new(move || App::new().app_data(app_state.clone()).configure(routes))
        .bind("127.0.0.1:3000")?;
    println!("serving on http://127.0.0.1:3000");
    server.run().await?; // until Ctrl-C
    // The ids reserved and not issued go back to the store.
    let returned = state.ids.close().await?;
    println!("stopped; {returned} unused ids given back");
    Ok(())
}

/// The checks every web example passes (`gdid_examples::web_api_check`), on a free port:
/// `cargo test -p gdid-examples --example web_actix`.
#[cfg(test)]
mod tests {
    use super::*;

    #[actix_web::test]
    async fn the_api_answers_as_documented() -> Result<(), Box<dyn Error>> {
        let store = Store::open("memory:").await?;
        let state = web::Data::new(AppState {
            ids: store.block_generator("shop", "orders").build()?,
            orders: Mutex::default(),
        });
        let server = HttpServer::new(move || App::new().app_data(state.clone()).configure(routes))
            .workers(2)
            .bind("127.0.0.1:0")?;
        let addr = *server.addrs().first().ok_or("bound to no address")?;
        let server = server.run();
        let handle = server.handle();
        let running = actix_web::rt::spawn(server);
        let checked = gdid_examples::web_api_check(addr).await;
        handle.stop(true).await;
        running.await??;
        checked
    }
}
