//! A TCP proxy on 127.0.0.1 that a test cuts and restores, so an outage of a shared service (a store's
//! Redis or PostgreSQL) can be simulated without stopping the service. Backends use it in their outage
//! tests; applications can use it to test how they ride through a store outage.

use std::io;
use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// What the proxy does with connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Forwards every connection to the upstream service.
    Open,
    /// Closes every open connection and every new one at once, like a service that went away.
    Refuse,
    /// Stops forwarding: open connections stay open but silent forever (even after a restore), and
    /// new ones are accepted and never answered, like a network partition.
    Blackhole,
}

/// The proxy; dropping it stops it and closes every connection.
#[derive(Debug)]
pub struct Proxy {
    addr: SocketAddr,
    state: watch::Sender<(Mode, u64)>,
    accept: JoinHandle<()>,
}

impl Proxy {
    /// Listens on an ephemeral port of 127.0.0.1 and forwards to `upstream`.
    pub async fn start(upstream: SocketAddr) -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let (state, _) = watch::channel((Mode::Open, 0));
        let accept = tokio::spawn(accept_loop(listener, upstream, state.clone()));
        Ok(Self { addr, state, accept })
    }

    /// The address to connect to instead of the service.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Switches to `mode`. Every switch starts a new epoch: connections of an earlier epoch are
    /// never forwarded again.
    pub fn set(&self, mode: Mode) {
        self.state.send_modify(|(current, epoch)| {
            *current = mode;
            *epoch += 1;
        });
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

async fn accept_loop(listener: TcpListener, upstream: SocketAddr, state: watch::Sender<(Mode, u64)>) {
    loop {
        let Ok((mut client, _)) = listener.accept().await else {
            continue;
        };
        let mut watch = state.subscribe();
        let (mode, epoch) = *watch.borrow_and_update();
        match mode {
            Mode::Refuse => {
                let _ = client.shutdown().await;
            }
            Mode::Blackhole => {
                tokio::spawn(async move {
                    hold_until_closed(&mut watch).await;
                    drop(client);
                });
            }
            Mode::Open => {
                tokio::spawn(forward(client, upstream, watch, epoch));
            }
        }
    }
}

/// Forwards until the proxy leaves `epoch`: on `Refuse` the connection is closed, on `Blackhole` it
/// is held open and silent until the proxy is dropped. Each chunk is forwarded only while the proxy
/// is still in `epoch`, checked between reading and writing it: once [`Proxy::set`] returns, no
/// byte read after it crosses, even before this task has seen the switch.
async fn forward(
    mut client: TcpStream,
    upstream: SocketAddr,
    mut watch: watch::Receiver<(Mode, u64)>,
    epoch: u64,
) {
    let Ok(mut server) = TcpStream::connect(upstream).await else {
        return;
    };
    let current = watch.clone();
    let open = move || current.borrow().1 == epoch;
    let next = {
        let (mut client_read, mut client_write) = client.split();
        let (mut server_read, mut server_write) = server.split();
        let both = async {
            tokio::join!(
                pump(&mut client_read, &mut server_write, &open),
                pump(&mut server_read, &mut client_write, &open),
            )
        };
        tokio::select! {
            _ = both => return,
            next = left_epoch(&mut watch, epoch) => next,
        }
    };
    if next == Some(Mode::Blackhole) {
        hold_until_closed(&mut watch).await;
    }
}

/// Copies `from` to `to` while `open()` holds, a chunk at a time; at the end of `from`, shuts `to`
/// down for writing (as `copy_bidirectional` does).
async fn pump(
    from: &mut (impl tokio::io::AsyncRead + Unpin),
    to: &mut (impl tokio::io::AsyncWrite + Unpin),
    open: &impl Fn() -> bool,
) -> io::Result<()> {
    let mut buf = vec![0_u8; 16 * 1024];
    loop {
        let n = from.read(&mut buf).await?;
        if !open() {
            // The proxy switched: nothing more crosses; the caller closes or holds the connection.
            return std::future::pending().await;
        }
        if n == 0 {
            return to.shutdown().await;
        }
        to.write_all(&buf[..n]).await?;
    }
}

/// Waits until the state leaves `epoch`; `None` when the proxy is gone.
async fn left_epoch(watch: &mut watch::Receiver<(Mode, u64)>, epoch: u64) -> Option<Mode> {
    loop {
        if watch.changed().await.is_err() {
            return None;
        }
        let (mode, now) = *watch.borrow_and_update();
        if now != epoch {
            return Some(mode);
        }
    }
}

/// Waits until the proxy is dropped.
async fn hold_until_closed(watch: &mut watch::Receiver<(Mode, u64)>) {
    while watch.changed().await.is_ok() {}
}
