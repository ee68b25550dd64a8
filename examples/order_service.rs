//! An order service whose records carry GDIDs as primary keys.
//!
//! `Customer` and `Order` each declare the sequence their ids come from (`Sequenced`), and a
//! `GdidProvider` issues them from blocks that an authority reserves in a store: a SQLite file
//! unless `GDID_ID_STORE` names another (`mysql://…`, `postgres://…` or `mongodb://…`). Each
//! sequence has a counter of its own, so customer `0:1:7` and order `0:1:7` are two different
//! ids. The records then go
//!
//! - to MongoDB when `GDID_MONGODB_URI` is set: the id is the `_id`, a Binary of subtype 0x80;
//! - to MySQL/MariaDB when `GDID_MYSQL_URL` is set: a `BINARY(12)` primary key;
//! - to a SQLite file when neither is set: a `BLOB` primary key.
//!
//! Each store is read back by id and in id order. The example fails (exit status 1) unless every
//! record comes back intact and the id order is the order the ids were issued in. The tables and
//! collections are dropped and created again at the start of each run, and kept afterwards to be
//! looked at.
//!
//! ```sh
//! cargo run -p gdid-examples --example order_service
//!
//! # with the local servers: records in MongoDB and MariaDB, ids from MongoDB
//! eval "$(scripts/services.sh)"
//! GDID_ID_STORE=$GDID_MONGODB_URI cargo run -p gdid-examples --example order_service
//! ```

use std::error::Error;
use std::fmt::Debug;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use bson::{Bson, doc};
use gdid_core::Gdid;
use gdid_engine::{GdidProvider, GeneratorConfig, IdOrder, Sequenced};
use gdid_examples::{
    MONGODB_VAR, MYSQL_VAR, authority_of, connect_mongodb, data_dir, describe_id_store, env_var,
    exit_status, id_store, open_id_store, redact,
};
use mongodb::{Collection, Database};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sqlx::mysql::{MySqlPool, MySqlPoolOptions, MySqlRow};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions, SqliteRow};

/// A customer of the shop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Customer {
    #[serde(rename = "_id", with = "gdid_core::bson::binary")]
    id: Gdid,
    name: String,
    email: String,
}

impl Sequenced for Customer {
    const SCOPE: &'static str = "shop";
    const SEQUENCE: &'static str = "customer";
}

/// An order of a customer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Order {
    #[serde(rename = "_id", with = "gdid_core::bson::binary")]
    id: Gdid,
    #[serde(with = "gdid_core::bson::binary")]
    customer_id: Gdid,
    total_cents: i64,
}

impl Sequenced for Order {
    const SCOPE: &'static str = "shop";
    const SEQUENCE: &'static str = "order";
}

const CUSTOMER_NAMES: [&str; 3] = ["Ada Lovelace", "Grace Hopper", "Alan Turing"];
const ORDER_TOTALS_CENTS: [i64; 5] = [1_999, 450, 12_000, 899, 31_415];

#[tokio::main]
async fn main() -> ExitCode {
    exit_status("order_service", run().await)
}

async fn run() -> Result<(), Box<dyn Error>> {
    let ids = id_provider().await?;
    let customers = register_customers(&ids).await?;
    let orders = place_orders(&ids, &customers).await?;
    show_issued(&ids, &customers, &orders)?;
    check_increasing("customer", customers.iter().map(|c| c.id))?;
    check_increasing("order", orders.iter().map(|o| o.id))?;

    let mongodb_uri = env_var(MONGODB_VAR);
    let mysql_url = env_var(MYSQL_VAR);
    if let Some(uri) = &mongodb_uri {
        let records = MongoRecords::connect(uri).await?;
        save_and_check(&records, &customers, &orders).await?;
    }
    if let Some(url) = &mysql_url {
        let records = SqlRecords::mysql(url).await?;
        save_and_check(&records, &customers, &orders).await?;
    }
    if mongodb_uri.is_none() && mysql_url.is_none() {
        let records = SqlRecords::sqlite(&data_dir()?.join("records.sqlite")).await?;
        save_and_check(&records, &customers, &orders).await?;
        println!("          (set {MONGODB_VAR} or {MYSQL_VAR} to store them on a server)");
    }
    // The ids reserved and not issued go back to the store while the runtime still runs.
    ids.close().await?;
    Ok(())
}

/// The GDIDs of every sequence, from the store `GDID_ID_STORE` names (a SQLite file by default).
async fn id_provider() -> Result<GdidProvider, Box<dyn Error>> {
    let store = open_id_store(&id_store()?).await?;
    println!(
        "ids       GDIDs of {} from {}",
        authority_of(&store),
        describe_id_store(&store)
    );
    // Strict: one increasing order across the process, whichever thread a request runs on, so
    // ORDER BY id is the order of issue. The default (per thread) is faster and increases per
    // thread only.
    let config = GeneratorConfig {
        order: IdOrder::Strict,
        ..GeneratorConfig::default()
    };
    Ok(GdidProvider::builder()
        .shared_authority(
            store
                .authority()
                .ok_or("the id store has no authority number")?,
        )
        .config(config)
        .build()?)
}

async fn register_customers(ids: &GdidProvider) -> Result<Vec<Customer>, gdid_engine::Error> {
    let mut customers = Vec::with_capacity(CUSTOMER_NAMES.len());
    for name in CUSTOMER_NAMES {
        customers.push(Customer {
            id: ids.next_for::<Customer>().await?,
            name: name.to_owned(),
            email: email_of(name),
        });
    }
    Ok(customers)
}

fn email_of(name: &str) -> String {
    format!("{}@example.com", name.to_lowercase().replace(' ', "."))
}

/// One order per total, the customers taking turns.
async fn place_orders(
    ids: &GdidProvider,
    customers: &[Customer],
) -> Result<Vec<Order>, gdid_engine::Error> {
    let mut orders = Vec::with_capacity(ORDER_TOTALS_CENTS.len());
    for (total_cents, customer) in ORDER_TOTALS_CENTS.into_iter().zip(customers.iter().cycle()) {
        orders.push(Order {
            id: ids.next_for::<Order>().await?,
            customer_id: customer.id,
            total_cents,
        });
    }
    Ok(orders)
}

fn show_issued(
    ids: &GdidProvider,
    customers: &[Customer],
    orders: &[Order],
) -> Result<(), Box<dyn Error>> {
    let allocations = |scope, sequence| -> Result<u64, gdid_engine::Error> {
        Ok(ids.generator(scope, sequence)?.stats().allocations)
    };
    println!(
        "customers {} issued from {} block(s), e.g. {} (hex {:x})",
        customers.len(),
        allocations(Customer::SCOPE, Customer::SEQUENCE)?,
        customers[0].id,
        customers[0].id,
    );
    for customer in customers {
        println!(
            "          {:<10} {} <{}>",
            customer.id, customer.name, customer.email
        );
    }
    println!(
        "orders    {} issued from {} block(s)",
        orders.len(),
        allocations(Order::SCOPE, Order::SEQUENCE)?
    );
    for order in orders {
        println!(
            "          {:<10} customer {:<10} {:>4}.{:02}",
            order.id,
            order.customer_id,
            order.total_cents / 100,
            order.total_cents % 100
        );
    }
    Ok(())
}

/// Fails unless the ids, in the order they were issued, strictly increase.
fn check_increasing(what: &str, ids: impl Iterator<Item = Gdid>) -> Result<(), String> {
    let ids: Vec<Gdid> = ids.collect();
    match ids.windows(2).find(|pair| pair[0] >= pair[1]) {
        Some(pair) => Err(format!(
            "{what} id {} was issued after {}, but does not sort after it",
            pair[1], pair[0]
        )),
        None => Ok(()),
    }
}

/// Fails with both values unless `found` equals `expected`.
fn check_equal<T: PartialEq + Debug>(what: &str, found: T, expected: T) -> Result<(), String> {
    if found == expected {
        Ok(())
    } else {
        Err(format!(
            "{what}:\n  expected {expected:?}\n  found    {found:?}"
        ))
    }
}

/// Saves the records in a fresh pair of tables, reads each back by id and all in id order, and
/// fails unless they come back as they were saved, in the order their ids were issued.
async fn save_and_check(
    records: &impl RecordStore,
    customers: &[Customer],
    orders: &[Order],
) -> Result<(), Box<dyn Error>> {
    println!("records   {}", records.describe());
    records.recreate().await?;
    records.insert(customers, orders).await?;
    for customer in customers {
        let found = records.customer(customer.id).await?;
        check_equal(
            &format!("customer {}", customer.id),
            found.as_ref(),
            Some(customer),
        )?;
    }
    for order in orders {
        let found = records.order(order.id).await?;
        check_equal(&format!("order {}", order.id), found.as_ref(), Some(order))?;
    }
    let customers_by_id = records.customers_by_id().await?;
    check_equal(
        "customers in id order",
        customers_by_id.as_slice(),
        customers,
    )?;
    let orders_by_id = records.orders_by_id().await?;
    check_equal("orders in id order", orders_by_id.as_slice(), orders)?;
    println!(
        "          saved {} customers and {} orders; read back by id: intact; \
         in id order: the order of issue",
        customers.len(),
        orders.len()
    );
    Ok(())
}

/// Where the records are kept: the same few operations on every database.
trait RecordStore {
    /// The database and the tables, in words.
    fn describe(&self) -> String;
    /// Drops the previous run's tables and creates them again, empty.
    async fn recreate(&self) -> Result<(), Box<dyn Error>>;
    async fn insert(&self, customers: &[Customer], orders: &[Order]) -> Result<(), Box<dyn Error>>;
    async fn customer(&self, id: Gdid) -> Result<Option<Customer>, Box<dyn Error>>;
    async fn order(&self, id: Gdid) -> Result<Option<Order>, Box<dyn Error>>;
    async fn customers_by_id(&self) -> Result<Vec<Customer>, Box<dyn Error>>;
    async fn orders_by_id(&self) -> Result<Vec<Order>, Box<dyn Error>>;
}

/// The collections `customers` and `orders` of the database `gdid_examples`; the GDID is the
/// `_id` (a Binary of subtype 0x80, through `gdid_core::bson::binary`).
struct MongoRecords {
    database: Database,
    uri: String,
}

impl MongoRecords {
    async fn connect(uri: &str) -> Result<MongoRecords, Box<dyn Error>> {
        Ok(MongoRecords {
            database: connect_mongodb(uri).await?,
            uri: redact(uri),
        })
    }

    fn customers(&self) -> Collection<Customer> {
        self.database.collection("customers")
    }

    fn orders(&self) -> Collection<Order> {
        self.database.collection("orders")
    }
}

/// Every document of `collection`, sorted on `_id`: `Gdid` order, since a Binary sorts by its
/// bytes and the 12 bytes of a GDID sort as the GDID does.
async fn all_by_id<T>(collection: &Collection<T>) -> mongodb::error::Result<Vec<T>>
where
    T: DeserializeOwned + Send + Sync,
{
    let mut cursor = collection.find(doc! {}).sort(doc! { "_id": 1 }).await?;
    let mut all = Vec::new();
    while cursor.advance().await? {
        all.push(cursor.deserialize_current()?);
    }
    Ok(all)
}

impl RecordStore for MongoRecords {
    fn describe(&self) -> String {
        let database = self.database.name();
        format!(
            "MongoDB {}, collections {database}.customers and {database}.orders",
            self.uri
        )
    }

    async fn recreate(&self) -> Result<(), Box<dyn Error>> {
        // The unique index on `_id` comes with every collection: nothing else to create.
        self.orders().drop().await?;
        self.customers().drop().await?;
        Ok(())
    }

    async fn insert(&self, customers: &[Customer], orders: &[Order]) -> Result<(), Box<dyn Error>> {
        self.customers().insert_many(customers).await?;
        self.orders().insert_many(orders).await?;
        Ok(())
    }

    async fn customer(&self, id: Gdid) -> Result<Option<Customer>, Box<dyn Error>> {
        Ok(self
            .customers()
            .find_one(doc! { "_id": Bson::from(id) })
            .await?)
    }

    async fn order(&self, id: Gdid) -> Result<Option<Order>, Box<dyn Error>> {
        Ok(self
            .orders()
            .find_one(doc! { "_id": Bson::from(id) })
            .await?)
    }

    async fn customers_by_id(&self) -> Result<Vec<Customer>, Box<dyn Error>> {
        Ok(all_by_id(&self.customers()).await?)
    }

    async fn orders_by_id(&self) -> Result<Vec<Order>, Box<dyn Error>> {
        Ok(all_by_id(&self.orders()).await?)
    }
}

/// How long a SQL server that cannot be reached is waited for.
const SQL_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A MySQL/MariaDB or SQLite database. The queries are the same on both; only the id column's
/// type differs (`BINARY(12)` and `BLOB`).
enum SqlPool {
    MySql(MySqlPool),
    Sqlite(SqlitePool),
}

/// Runs `$body` with `$pool` bound to the pool of either kind: the code is the same for both,
/// the types are not.
macro_rules! on_pool {
    ($pool_enum:expr, $pool:ident => $body:expr) => {
        match $pool_enum {
            SqlPool::MySql($pool) => $body,
            SqlPool::Sqlite($pool) => $body,
        }
    };
}

/// The tables `gdid_example_customers` and `gdid_example_orders`, whose primary keys are GDIDs
/// (through gdid-core's sqlx support).
struct SqlRecords {
    pool: SqlPool,
    place: String,
}

const MYSQL_TABLES: [&str; 2] = [
    "CREATE TABLE gdid_example_customers (id BINARY(12) NOT NULL PRIMARY KEY, \
     name VARCHAR(100) NOT NULL, email VARCHAR(100) NOT NULL)",
    "CREATE TABLE gdid_example_orders (id BINARY(12) NOT NULL PRIMARY KEY, \
     customer_id BINARY(12) NOT NULL, total_cents BIGINT NOT NULL, \
     FOREIGN KEY (customer_id) REFERENCES gdid_example_customers (id))",
];
const SQLITE_TABLES: [&str; 2] = [
    "CREATE TABLE gdid_example_customers (id BLOB NOT NULL PRIMARY KEY, \
     name TEXT NOT NULL, email TEXT NOT NULL)",
    "CREATE TABLE gdid_example_orders (id BLOB NOT NULL PRIMARY KEY, \
     customer_id BLOB NOT NULL, total_cents INTEGER NOT NULL, \
     FOREIGN KEY (customer_id) REFERENCES gdid_example_customers (id))",
];
const DROP_TABLES: [&str; 2] = [
    "DROP TABLE IF EXISTS gdid_example_orders",
    "DROP TABLE IF EXISTS gdid_example_customers",
];
const INSERT_CUSTOMER: &str =
    "INSERT INTO gdid_example_customers (id, name, email) VALUES (?, ?, ?)";
const INSERT_ORDER: &str =
    "INSERT INTO gdid_example_orders (id, customer_id, total_cents) VALUES (?, ?, ?)";
const CUSTOMER_BY_ID: &str = "SELECT id, name, email FROM gdid_example_customers WHERE id = ?";
const ORDER_BY_ID: &str =
    "SELECT id, customer_id, total_cents FROM gdid_example_orders WHERE id = ?";
const CUSTOMERS_BY_ID: &str = "SELECT id, name, email FROM gdid_example_customers ORDER BY id";
const ORDERS_BY_ID: &str =
    "SELECT id, customer_id, total_cents FROM gdid_example_orders ORDER BY id";

type CustomerRow = (Gdid, String, String);
type OrderRow = (Gdid, Gdid, i64);

impl From<CustomerRow> for Customer {
    fn from((id, name, email): CustomerRow) -> Customer {
        Customer { id, name, email }
    }
}

impl From<OrderRow> for Order {
    fn from((id, customer_id, total_cents): OrderRow) -> Order {
        Order {
            id,
            customer_id,
            total_cents,
        }
    }
}

impl SqlRecords {
    async fn mysql(url: &str) -> Result<SqlRecords, String> {
        let pool = MySqlPoolOptions::new()
            .acquire_timeout(SQL_CONNECT_TIMEOUT)
            .connect(url)
            .await
            .map_err(|e| format!("cannot connect to {}: {e}", redact(url)))?;
        Ok(SqlRecords {
            pool: SqlPool::MySql(pool),
            place: format!("MySQL/MariaDB {}", redact(url)),
        })
    }

    /// The SQLite file at `path`, created if missing.
    async fn sqlite(path: &Path) -> Result<SqlRecords, String> {
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true);
        let pool = SqlitePoolOptions::new()
            .acquire_timeout(SQL_CONNECT_TIMEOUT)
            .connect_with(options)
            .await
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        Ok(SqlRecords {
            pool: SqlPool::Sqlite(pool),
            place: format!("SQLite file {}", path.display()),
        })
    }
}

/// A row of either table, read the same way from either kind of database.
trait SqlRow:
    for<'r> sqlx::FromRow<'r, MySqlRow> + for<'r> sqlx::FromRow<'r, SqliteRow> + Send + Unpin
{
}

impl<R> SqlRow for R where
    R: for<'r> sqlx::FromRow<'r, MySqlRow> + for<'r> sqlx::FromRow<'r, SqliteRow> + Send + Unpin
{
}

impl SqlRecords {
    /// The record of `query`'s row for `id`, if there is one.
    async fn one<R: SqlRow, T: From<R>>(
        &self,
        query: &'static str,
        id: Gdid,
    ) -> Result<Option<T>, Box<dyn Error>> {
        let row = on_pool!(&self.pool, pool => {
            sqlx::query_as::<_, R>(query).bind(id).fetch_optional(pool).await?
        });
        Ok(row.map(T::from))
    }

    /// The records of `query`'s rows, in its order.
    async fn all<R: SqlRow, T: From<R>>(
        &self,
        query: &'static str,
    ) -> Result<Vec<T>, Box<dyn Error>> {
        let rows = on_pool!(&self.pool, pool => {
            sqlx::query_as::<_, R>(query).fetch_all(pool).await?
        });
        Ok(rows.into_iter().map(T::from).collect())
    }
}

impl RecordStore for SqlRecords {
    fn describe(&self) -> String {
        format!(
            "{}, tables gdid_example_customers and gdid_example_orders",
            self.place
        )
    }

    async fn recreate(&self) -> Result<(), Box<dyn Error>> {
        let tables = match self.pool {
            SqlPool::MySql(_) => MYSQL_TABLES,
            SqlPool::Sqlite(_) => SQLITE_TABLES,
        };
        for statement in DROP_TABLES.into_iter().chain(tables) {
            on_pool!(&self.pool, pool => {
                sqlx::query(statement).execute(pool).await?;
            });
        }
        Ok(())
    }

    async fn insert(&self, customers: &[Customer], orders: &[Order]) -> Result<(), Box<dyn Error>> {
        on_pool!(&self.pool, pool => {
            let mut transaction = pool.begin().await?;
            for customer in customers {
                sqlx::query(INSERT_CUSTOMER)
                    .bind(customer.id)
                    .bind(customer.name.as_str())
                    .bind(customer.email.as_str())
                    .execute(&mut *transaction)
                    .await?;
            }
            for order in orders {
                sqlx::query(INSERT_ORDER)
                    .bind(order.id)
                    .bind(order.customer_id)
                    .bind(order.total_cents)
                    .execute(&mut *transaction)
                    .await?;
            }
            transaction.commit().await?;
        });
        Ok(())
    }

    async fn customer(&self, id: Gdid) -> Result<Option<Customer>, Box<dyn Error>> {
        self.one::<CustomerRow, _>(CUSTOMER_BY_ID, id).await
    }

    async fn order(&self, id: Gdid) -> Result<Option<Order>, Box<dyn Error>> {
        self.one::<OrderRow, _>(ORDER_BY_ID, id).await
    }

    async fn customers_by_id(&self) -> Result<Vec<Customer>, Box<dyn Error>> {
        self.all::<CustomerRow, _>(CUSTOMERS_BY_ID).await
    }

    async fn orders_by_id(&self) -> Result<Vec<Order>, Box<dyn Error>> {
        self.all::<OrderRow, _>(ORDERS_BY_ID).await
    }
}
