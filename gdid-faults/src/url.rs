//! [`ServerUrl`]: the two parts of a server's URL the suite rewrites, its address (to go through a
//! relay) and its database (a store per authority number). Which kind of store a URL names, and
//! whether this build opens it, is `gdid::Store`'s to say.

use std::net::{SocketAddr, ToSocketAddrs};

use crate::error::SetupError;

/// A URL of the form `scheme://[user@]host:port[/database][?options]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerUrl<'a> {
    /// `scheme://` and `user@`, as written.
    before_host: &'a str,
    /// `host:port`.
    host: &'a str,
    /// `/database`, or empty.
    path: &'a str,
    /// `?options`, or empty.
    query: &'a str,
}

impl<'a> ServerUrl<'a> {
    /// The parts of `url`; `None` for a URL that names no server (`sqlite:PATH`: a file).
    pub fn parse(url: &'a str) -> Option<ServerUrl<'a>> {
        let host_start = url.find("://")? + 3;
        let (before_query, query) = url.split_at(url.find('?').unwrap_or(url.len()));
        let (before_path, path) = before_query.split_at(
            before_query[host_start..]
                .find('/')
                .map_or(before_query.len(), |i| host_start + i),
        );
        let (before_host, host) =
            before_path.split_at(before_path.rfind('@').map_or(host_start, |at| at + 1));
        Some(ServerUrl {
            before_host,
            host,
            path,
            query,
        })
    }

    /// The address of the server.
    ///
    /// # Errors
    ///
    /// When the URL names no port, or its host does not resolve.
    pub fn address(&self) -> Result<SocketAddr, SetupError> {
        let no_address = |why: &str| format!("{}: {why}", self.host);
        self.host
            .to_socket_addrs()
            .map_err(|e| no_address(&format!("{e} (the URL must name the server's port)")))?
            .next()
            .ok_or_else(|| no_address("the host does not resolve").into())
    }

    /// The URL of database `name` on this server.
    pub fn with_database(&self, name: &str) -> String {
        format!("{}{}/{name}{}", self.before_host, self.host, self.query)
    }

    /// The URL of the same database through the relay at `via`.
    pub fn via(&self, via: SocketAddr) -> String {
        format!("{}{via}{}{}", self.before_host, self.path, self.query)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_url_gets_another_database_or_another_address() {
        let url = "mongodb://127.0.0.1:27018/?directConnection=true";
        let server = ServerUrl::parse(url).unwrap();
        assert_eq!(
            server.with_database("ids_1"),
            "mongodb://127.0.0.1:27018/ids_1?directConnection=true"
        );
        let mysql = "mysql://root:pw@127.0.0.1:3306/test";
        assert_eq!(
            ServerUrl::parse(mysql).unwrap().with_database("ids_2"),
            "mysql://root:pw@127.0.0.1:3306/ids_2"
        );
        let server = ServerUrl::parse(mysql).unwrap();
        assert_eq!(server.address().unwrap(), "127.0.0.1:3306".parse().unwrap());
        let via = server.via("127.0.0.1:9".parse().unwrap());
        assert_eq!(via, "mysql://root:pw@127.0.0.1:9/test");
        assert_eq!(ServerUrl::parse("sqlite:/tmp/ids.sqlite"), None);
        assert!(
            ServerUrl::parse("postgres://db.invalid/test")
                .unwrap()
                .address()
                .is_err()
        );
    }
}
