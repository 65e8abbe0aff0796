//! A TCP load balancer on 127.0.0.1 that sends each new connection to the next of several
//! upstreams in turn: behind it, a client that opens a connection per request (no keep-alive)
//! reaches a different instance with each consecutive request, the deployment a multi-instance
//! server must survive without sticky sessions.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// The balancer; dropping it stops accepting (connections already forwarded run to their end).
#[derive(Debug)]
pub struct RoundRobin {
    addr: SocketAddr,
    counts: Arc<Vec<AtomicU64>>,
    accept: JoinHandle<()>,
}

impl RoundRobin {
    /// Listens on an ephemeral port of 127.0.0.1 and forwards connection `n` to
    /// `upstreams[n % upstreams.len()]`.
    ///
    /// # Errors
    /// When there is no upstream, or the port cannot be bound.
    pub async fn start(upstreams: Vec<SocketAddr>) -> io::Result<Self> {
        if upstreams.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a round robin needs an upstream",
            ));
        }
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let counts: Arc<Vec<AtomicU64>> = Arc::new(upstreams.iter().map(|_| AtomicU64::new(0)).collect());
        let next = AtomicUsize::new(0);
        let counted = Arc::clone(&counts);
        let accept = tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    continue;
                };
                let turn = next.fetch_add(1, Ordering::Relaxed) % upstreams.len();
                counted[turn].fetch_add(1, Ordering::Relaxed);
                tokio::spawn(forward(client, upstreams[turn]));
            }
        });
        Ok(Self { addr, counts, accept })
    }

    /// The address clients connect to.
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// How many connections went to each upstream, in the order given to [`RoundRobin::start`].
    #[must_use]
    pub fn connections(&self) -> Vec<u64> {
        self.counts
            .iter()
            .map(|count| count.load(Ordering::Relaxed))
            .collect()
    }
}

impl Drop for RoundRobin {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

async fn forward(mut client: TcpStream, upstream: SocketAddr) {
    if let Ok(mut server) = TcpStream::connect(upstream).await {
        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// An upstream that answers every connection with its own name.
    async fn named(name: &'static [u8]) -> SocketAddr {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.expect("bound");
        let addr = listener.local_addr().expect("an address");
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let _ = stream.write_all(name).await;
            }
        });
        addr
    }

    #[tokio::test]
    async fn consecutive_connections_reach_the_upstreams_in_turn() {
        let balancer = RoundRobin::start(vec![named(b"a").await, named(b"b").await])
            .await
            .expect("started");
        let mut seen = Vec::new();
        for _ in 0..4 {
            let mut stream = TcpStream::connect(balancer.addr()).await.expect("connected");
            let mut name = [0_u8; 1];
            stream.read_exact(&mut name).await.expect("a name");
            seen.push(name[0]);
        }
        assert_eq!(seen, b"abab");
        assert_eq!(balancer.connections(), [2, 2]);
        assert!(RoundRobin::start(Vec::new()).await.is_err());
    }
}
