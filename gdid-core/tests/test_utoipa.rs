//! utoipa (feature `utoipa`): an axum service's generated OpenAPI document describes a `Gdid`
//! path parameter and JSON field as the string serde writes, and a live request to the service
//! agrees with it: the id in the path and in the reply validate against the document's schemas
//! (the `jsonschema` crate), and an id the schema rejects is refused by the service.

use axum::Json;
use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::Path;
use axum::http::{Request, StatusCode};
use axum::routing::get;
use gdid_core::Gdid;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tower::ServiceExt;
use utoipa::{OpenApi, PartialSchema, ToSchema};

/// An order, keyed by a GDID, with an optional parent order.
#[derive(Serialize, Deserialize, ToSchema)]
struct Order {
    id: Gdid,
    parent: Option<Gdid>,
    item: String,
}

/// The order `id`, as the service would load it.
#[utoipa::path(
    get,
    path = "/orders/{id}",
    params(("id" = Gdid, Path, description = "The order's id")),
    responses((status = 200, description = "The order", body = Order))
)]
async fn get_order(Path(id): Path<Gdid>) -> Json<Order> {
    let parent = Gdid::from_parts(id.era(), id.authority(), id.counter() / 2).ok();
    Json(Order {
        id,
        parent,
        item: "book".to_owned(),
    })
}

#[derive(OpenApi)]
#[openapi(paths(get_order))]
struct ApiDoc;

fn service() -> Router {
    Router::new().route("/orders/{id}", get(get_order))
}

/// The generated document, as JSON.
fn document() -> Value {
    serde_json::to_value(ApiDoc::openapi()).unwrap()
}

/// A validator of `schema` (which may refer to the document's components).
fn validator(schema: &Value, document: &Value) -> jsonschema::Validator {
    let mut root = schema.clone();
    root["components"] = document["components"].clone();
    jsonschema::validator_for(&root).expect("a valid schema")
}

async fn request(path: &str) -> (StatusCode, Vec<u8>) {
    let request = Request::get(path).body(Body::empty()).unwrap();
    let response = service().oneshot(request).await.unwrap();
    let status = response.status();
    (
        status,
        to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap()
            .to_vec(),
    )
}

#[test]
fn the_schema_is_the_string_serde_writes() {
    let schema = serde_json::to_value(Gdid::schema()).unwrap();
    assert_eq!(schema["type"], "string");
    assert!(schema["pattern"].as_str().unwrap().starts_with("^(?:"));
    assert_eq!(schema["examples"], json!(["1293:3:57"]));
    assert_eq!(Gdid::name(), "Gdid");
}

#[tokio::test]
async fn the_path_parameter_and_the_body_match_a_live_request() {
    let document = document();
    let operation = &document["paths"]["/orders/{id}"]["get"];
    let parameter = &operation["parameters"][0];
    assert_eq!(parameter["name"], "id");
    assert_eq!(parameter["in"], "path");
    let parameter_schema = validator(&parameter["schema"], &document);
    let body_schema = validator(
        &operation["responses"]["200"]["content"]["application/json"]["schema"],
        &document,
    );

    let id = Gdid::from_parts(1293, 3, 57).unwrap();
    assert!(parameter_schema.is_valid(&json!(id.to_string())));
    let (status, body) = request(&format!("/orders/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    let reply: Value = serde_json::from_slice(&body).unwrap();
    assert!(body_schema.is_valid(&reply), "{reply}");
    assert_eq!(reply["id"], "1293:3:57");
    assert_eq!(reply["parent"], "1293:3:28");
    let order: Order = serde_json::from_value(reply).unwrap();
    assert_eq!(order.id, id);

    // An id the schema rejects, the service refuses too.
    for bad in ["1:16:1", "4294967296:0:0", "1:2"] {
        assert!(!parameter_schema.is_valid(&json!(bad)), "{bad}");
        let (status, _) = request(&format!("/orders/{bad}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
    }
    assert!(!body_schema.is_valid(&json!({"id": "1:16:1", "parent": null, "item": "x"})));
}
