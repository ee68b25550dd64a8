//! A sea-orm entity whose primary key is a GDID (feature `sea-orm` of the `gdid` crate).
//!
//! The ids come from a block generator of a `gdid::Store`: a SQLite file unless `GDID_ID_STORE`
//! names another store (`mysql://…`, `postgres://…`, `mongodb://…`). The rows go to the table
//! `gdid_example_articles` of a SQLite file through sea-orm: the table is created from the entity
//! (`id blob`, `parent_id blob NULL`), rows are inserted as active models, then read back by
//! primary key and in key order. The example fails (exit status 1) unless every row comes back
//! intact, the NULL parents included, and the key order is the order the ids were issued in. The
//! table is dropped and created again at the start of each run and kept afterwards.
//!
//! ```sh
//! cargo run -p gdid-examples --example orm_sea_orm
//! ```

use std::error::Error;
use std::process::ExitCode;

use gdid::Gdid;
use gdid_examples::{
    authority_of, data_dir, describe_id_store, exit_status, id_store, open_id_store,
};
use sea_orm::entity::prelude::*;
use sea_orm::{ConnectionTrait, Database, QueryOrder, Schema, Set};

/// The entity: an article, and the article it answers (if any).
mod article {
    use gdid::Gdid;
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "gdid_example_articles")]
    pub(crate) struct Model {
        /// Issued by the application from a block of GDIDs, never by the database.
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: Gdid,
        /// The article this one answers; NULL for a first post.
        pub parent_id: Option<Gdid>,
        pub title: String,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub(crate) enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

const TITLES: [&str; 5] = [
    "GDIDs as primary keys",
    "Re: GDIDs as primary keys",
    "Re: Re: GDIDs as primary keys",
    "Blocks of counters",
    "Re: Blocks of counters",
];

#[tokio::main]
async fn main() -> ExitCode {
    exit_status("orm_sea_orm", run().await)
}

async fn run() -> Result<(), Box<dyn Error>> {
    // The ids: a block generator of the store's authority, one sequence for the articles.
    let store = open_id_store(&id_store()?).await?;
    let ids = store.block_generator("blog", "article").build()?;
    println!(
        "ids       GDIDs of {} from {}",
        authority_of(&store),
        describe_id_store(&store)
    );

    // The records: SQLite through sea-orm, the table made from the entity.
    let path = data_dir()?.join("orm_sea_orm.sqlite");
    let db = Database::connect(format!("sqlite:{}?mode=rwc", path.display())).await?;
    let backend = db.get_database_backend();
    db.execute_unprepared("DROP TABLE IF EXISTS gdid_example_articles")
        .await?;
    db.execute(&Schema::new(backend).create_table_from_entity(article::Entity))
        .await?;
    println!(
        "records   sea-orm, table gdid_example_articles in {}",
        path.display()
    );

    // Each "Re:" answers the article before it; the others are first posts (parent NULL).
    let mut articles: Vec<article::Model> = Vec::with_capacity(TITLES.len());
    for title in TITLES {
        let parent_id = match articles.last() {
            Some(previous) if title.starts_with("Re:") => Some(previous.id),
            _ => None,
        };
        let model = article::ActiveModel {
            id: Set(ids.next_id().await?),
            parent_id: Set(parent_id),
            title: Set(title.to_owned()),
        }
        .insert(&db)
        .await?;
        println!(
            "          {:<12} {title}{}",
            model.id,
            parent_id.map_or(String::new(), |p| format!(" (answers {p})"))
        );
        articles.push(model);
    }

    for article in &articles {
        let found = article::Entity::find_by_id(article.id).one(&db).await?;
        if found.as_ref() != Some(article) {
            return Err(format!(
                "article {}: expected {article:?}, found {found:?}",
                article.id
            )
            .into());
        }
    }
    let in_key_order = article::Entity::find()
        .order_by_asc(article::Column::Id)
        .all(&db)
        .await?;
    if in_key_order != articles {
        return Err(format!(
            "ORDER BY id is not the order of issue:\n  issued {articles:?}\n  read   {in_key_order:?}"
        )
        .into());
    }
    let first_posts = article::Entity::find()
        .filter(article::Column::ParentId.is_null())
        .count(&db)
        .await?;
    let expected_first_posts = articles.iter().filter(|a| a.parent_id.is_none()).count();
    if usize::try_from(first_posts)? != expected_first_posts {
        return Err(format!(
            "{first_posts} first posts (parent NULL) in the table, {expected_first_posts} saved"
        )
        .into());
    }
    let newest: Gdid = articles[articles.len() - 1].id;
    println!(
        "          saved {} articles; read back by id: intact; in id order: the order of issue; \
         newest {newest} (hex {newest:x})",
        articles.len()
    );
    ids.close().await?; // what was reserved and not issued goes back
    Ok(())
}
