//! One issued id through each integration that a feature of the `gdid` crate adds, as a
//! service's code uses them: a JSON Schema (`schemars`), an OpenAPI document (`utoipa`), a
//! GraphQL schema (`async-graphql`), a SQLite table through rusqlite (`rusqlite`), a fuzzer's
//! bytes (`arbitrary`) and property tests (`proptest`). Each step reads the id back and checks
//! it is the one it was given; docs/interoperability.md explains each integration.
//!
//! ```text
//! cargo run -p gdid-examples --example integrations
//! ```

use std::error::Error;

use async_graphql::{EmptyMutation, EmptySubscription, Object, Request, Schema, Variables};
use gdid::{Gdid, Store};
use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use utoipa::OpenApi;

/// An order, keyed by a GDID, as a service's API sends it.
#[derive(Serialize, Deserialize, schemars::JsonSchema, utoipa::ToSchema, Debug, PartialEq)]
struct Order {
    id: Gdid,
    parent: Option<Gdid>,
    item: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let store = Store::open("memory:").await?;
    let orders = store.block_generator("shop", "orders").build()?;
    let order = Order {
        id: orders.next_id().await?,
        parent: None,
        item: "book".to_owned(),
    };
    println!("issued {}", order.id);

    let steps: [(&str, Gdid); 6] = [
        (
            "schemars: a JSON body the schema admits",
            json_schema(&order)?,
        ),
        ("utoipa: an OpenAPI path parameter", open_api(order.id)?),
        ("async-graphql: a GraphQL query", graphql(order.id).await?),
        ("rusqlite: a BLOB column", rusqlite_row(order.id)?),
        ("arbitrary: a fuzzer's 12 bytes", arbitrary_bytes(order.id)?),
        (
            "proptest: a strategy of this authority's ids",
            property(order.id)?,
        ),
    ];
    for (step, read_back) in steps {
        if read_back != order.id {
            return Err(format!("{step}: read {read_back} back, not {}", order.id).into());
        }
        println!("{step}: {read_back}");
    }
    orders.close().await?;
    Ok(())
}

/// The order as JSON, validated against its JSON Schema and read back.
fn json_schema(order: &Order) -> Result<Gdid, Box<dyn Error>> {
    let schema = schemars::schema_for!(Order).to_value();
    let body = serde_json::to_value(order)?;
    jsonschema::validator_for(&schema)?
        .validate(&body)
        .map_err(|error| format!("the body breaks its schema: {error}"))?;
    Ok(serde_json::from_value::<Order>(body)?.id)
}

#[derive(OpenApi)]
#[openapi(components(schemas(Order)))]
struct ApiDoc;

/// The id as the text of a path parameter, validated against the document's `Gdid` schema.
fn open_api(id: Gdid) -> Result<Gdid, Box<dyn Error>> {
    let document = serde_json::to_value(ApiDoc::openapi())?;
    let mut schema = json!({"$ref": "#/components/schemas/Gdid"});
    schema["components"] = document["components"].clone();
    let text = id.to_string();
    jsonschema::validator_for(&schema)?
        .validate(&json!(text))
        .map_err(|error| format!("{text} breaks the document's schema: {error}"))?;
    Ok(text.parse()?)
}

struct Query;

#[Object]
impl Query {
    /// The order's id, as the service would look it up.
    async fn order(&self, id: Gdid) -> Gdid {
        id
    }
}

/// The id sent as a GraphQL variable and answered back.
async fn graphql(id: Gdid) -> Result<Gdid, Box<dyn Error>> {
    let schema = Schema::new(Query, EmptyMutation, EmptySubscription);
    let request = Request::new("query ($id: Gdid!) { order(id: $id) }")
        .variables(Variables::from_json(json!({ "id": id })));
    let response = schema.execute(request).await;
    if let Some(error) = response.errors.first() {
        return Err(error.message.clone().into());
    }
    match response.data.into_json()?["order"].take() {
        Value::String(text) => Ok(text.parse()?),
        other => Err(format!("the answer is not a string: {other}").into()),
    }
}

/// The id in a SQLite table through rusqlite, as a 12-byte BLOB.
fn rusqlite_row(id: Gdid) -> Result<Gdid, Box<dyn Error>> {
    let db = rusqlite::Connection::open_in_memory()?;
    db.execute_batch("CREATE TABLE orders (id BLOB PRIMARY KEY, item TEXT NOT NULL)")?;
    db.execute("INSERT INTO orders (id, item) VALUES (?1, 'book')", [id])?;
    Ok(db.query_row("SELECT id FROM orders", [], |row| row.get(0))?)
}

/// The id's 12 bytes, as a fuzzer hands them to `Arbitrary`.
fn arbitrary_bytes(id: Gdid) -> Result<Gdid, Box<dyn Error>> {
    let bytes = id.to_bytes();
    Ok(arbitrary::Unstructured::new(&bytes).arbitrary()?)
}

/// A property of every id of this id's authority (the text form reads back), then this id
/// through the same check.
fn property(id: Gdid) -> Result<Gdid, Box<dyn Error>> {
    let text_round_trips = |id: Gdid| -> Result<(), TestCaseError> {
        prop_assert_eq!(id.to_string().parse::<Gdid>(), Ok(id));
        Ok(())
    };
    // A program, not a test file: no file to keep failing cases beside.
    let config = ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    TestRunner::new(config)
        .run(
            &gdid::proptest::gdid_of_authority(id.authority()),
            text_round_trips,
        )
        .map_err(|failure| format!("{failure}"))?;
    text_round_trips(id).map_err(|failure| format!("{failure}"))?;
    Ok(id.to_string().parse()?)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_integration_reads_the_id_back() {
        super::main().expect("every step reads the id back");
    }
}
