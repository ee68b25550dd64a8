//! async-graphql (feature `async-graphql`): the scalar `Gdid` through a schema's query and
//! mutation, as variables and inline literals; a value that is not an id is an error naming it.

use async_graphql::{EmptySubscription, Object, Request, Schema, Variables};
use gdid_core::Gdid;
use serde_json::json;

struct Query;

#[Object]
impl Query {
    /// The id's parts, and the id itself back.
    async fn order(&self, id: Gdid) -> Order {
        Order { id }
    }
}

struct Order {
    id: Gdid,
}

#[Object]
impl Order {
    async fn id(&self) -> Gdid {
        self.id
    }

    async fn authority(&self) -> u8 {
        self.id.authority()
    }

    async fn parent(&self) -> Option<Gdid> {
        None
    }
}

struct Mutation;

#[Object]
impl Mutation {
    /// The next id after `after`.
    async fn next(&self, after: Gdid) -> Gdid {
        Gdid::from_parts(after.era(), after.authority(), after.counter() + 1).unwrap()
    }
}

fn schema() -> Schema<Query, Mutation, EmptySubscription> {
    Schema::new(Query, Mutation, EmptySubscription)
}

#[tokio::test]
async fn an_id_goes_in_and_comes_out_as_the_colon_text() {
    let request = Request::new("query ($id: Gdid!) { order(id: $id) { id authority parent } }")
        .variables(Variables::from_json(json!({"id": "1293:3:57"})));
    let response = schema().execute(request).await;
    assert!(response.errors.is_empty(), "{:?}", response.errors);
    assert_eq!(
        response.data.into_json().unwrap(),
        json!({"order": {"id": "1293:3:57", "authority": 3, "parent": null}})
    );

    let response = schema()
        .execute(r#"mutation { next(after: "0000050d3000000000000039") }"#)
        .await;
    assert!(response.errors.is_empty(), "{:?}", response.errors);
    assert_eq!(
        response.data.into_json().unwrap(),
        json!({"next": "1293:3:58"})
    );
}

#[tokio::test]
async fn a_bad_value_is_an_error_that_names_it() {
    let response = schema().execute(r#"{ order(id: "1:16:1") { id } }"#).await;
    assert_eq!(response.errors.len(), 1, "{:?}", response.errors);
    let message = &response.errors[0].message;
    assert!(message.contains(r#""1:16:1" is not a GDID"#), "{message}");
    assert!(message.contains("authority"), "{message}");

    let request = Request::new("mutation ($after: Gdid!) { next(after: $after) }")
        .variables(Variables::from_json(json!({"after": 1293})));
    let response = schema().execute(request).await;
    assert_eq!(response.errors.len(), 1, "{:?}", response.errors);
    assert!(
        response.errors[0].message.contains("Gdid"),
        "{}",
        response.errors[0].message
    );
}

#[test]
fn the_sdl_declares_the_scalar() {
    let sdl = schema().sdl();
    assert!(sdl.contains("scalar Gdid"), "{sdl}");
    assert!(sdl.contains("order(id: Gdid!): Order!"), "{sdl}");
}
