#!/usr/bin/env node
// A Card Arena bot in Node.js: a cardarena.bot.v1.BotService gRPC server that answers every
// ChooseAction with a legal action drawn by a seeded generator. It plays every game the referee
// offers, including games added after it was written, because it only copies one of the
// `legal_actions` it is sent back to the referee.
//
// The .proto files are loaded at run time (no generated code): by default from ../../proto
// relative to this file, i.e. the repository's proto/ folder, or from --proto-root DIR.
//
//   npm ci
//   node bot.js --listen 127.0.0.1:50051 --seed 7
//   node bot.js --connect arena.example.org:50050 --tls --bot-id ID --token KEY   # behind NAT
//
// Serving, it answers the unary calls and the Play stream (every match on one stream, each
// message tagged with an id: docs/bot-protocol.md). Prints "LISTENING host:port" on stdout once
// it serves (port 0 picks a free port). With --connect it serves nothing: it dials the arena's
// ConnectBot as a bot registered as outbound, prints "CONNECTING host:port", and dials again
// with back-off whenever the stream ends. Stops cleanly on SIGTERM or SIGINT.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const USAGE = `usage: node bot.js [--listen HOST:PORT] [--seed N] [--name NAME] [--proto-root DIR]

  --listen HOST:PORT  address to serve on (default 127.0.0.1:0; port 0 = any free port)
  --seed N            seed for the bot's choices (default: from the clock)
  --name NAME         the name GetInfo reports (default node-random)
  --proto-root DIR    folder holding cardarena/bot/v1/bot_service.proto (default ../../proto)
  --connect HOST:PORT dial the arena there instead of serving (needs --bot-id and --token)
  --bot-id ID         with --connect: the bot's id from registration
  --token TOKEN       with --connect: the bot's key or its owner's token ("-": stdin)
  --tls               with --connect: dial over TLS (always, over the internet)
  --ca-file FILE      with --tls: the CA to trust (default: the system's roots)
  --verbose           log each call to stderr`;

function parseCommandLine(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      listen: { type: 'string', default: '127.0.0.1:0' },
      seed: { type: 'string' },
      name: { type: 'string', default: 'node-random' },
      'proto-root': { type: 'string', default: path.resolve(__dirname, '..', '..', 'proto') },
      connect: { type: 'string' },
      'bot-id': { type: 'string' },
      token: { type: 'string' },
      tls: { type: 'boolean', default: false },
      'ca-file': { type: 'string' },
      verbose: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const seed = values.seed === undefined ? Date.now() : Number(values.seed);
  if (!Number.isSafeInteger(seed)) {
    throw new Error(`--seed must be an integer, got ${values.seed}`);
  }
  if (values.connect && (!values['bot-id'] || !values.token)) {
    throw new Error('--connect needs --bot-id and --token');
  }
  if (values['ca-file'] && !values.tls) {
    throw new Error('--ca-file goes with --tls');
  }
  return {
    ...values,
    seed,
    protoRoot: values['proto-root'],
    botId: values['bot-id'],
    caFile: values['ca-file'],
  };
}

// mulberry32: a small, fast, seedable generator; the same seed gives the same choices.
function seededRandom(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Enum numbers by name, filled in when the .proto files are loaded: RANK.RANK_ACE === 14,
// SUIT.SUIT_SPADES === 4. Handy for comparing cards, whose enums arrive as names.
const RANK = {};
const SUIT = {};

function loadProtos(protoRoot) {
  const files = ['cardarena/bot/v1/bot_service.proto', 'cardarena/arena/v1/arena_service.proto'];
  const definition = protoLoader.loadSync(files, {
    includeDirs: [protoRoot],
    keepCase: true, // field names as in the .proto: legal_actions, time_control, ...
    longs: String, // int64 option values arrive as strings, never lose precision
    enums: String, // enum values by name, e.g. "MATCH_STATUS_COMPLETED"
    defaults: true, // unset scalars read as 0, "" or false (seat 0 is a real seat)
    oneofs: true, // plus a virtual field naming the set case: action.game === "oh_hell"
  });
  for (const [table, name] of [[RANK, 'Rank'], [SUIT, 'Suit']]) {
    for (const value of definition[`cardarena.game.v1.${name}`].type.value) {
      table[value.name] = value.number;
    }
  }
  const loaded = grpc.loadPackageDefinition(definition).cardarena;
  return { BotService: loaded.bot.v1.BotService, ArenaService: loaded.arena.v1.ArenaService };
}

// The bot's logic: one of the legal actions. Copying the message is enough; the referee compares
// actions by value. A stronger bot reads what its seat sees: request.observation.game names the
// game ("oh_hell", "king", ...) and request.observation[request.observation.game] is that game's
// observation message (see proto/cardarena/game/v1/<game>.proto and docs/games/).
function chooseAction(request, random) {
  const legal = request.legal_actions;
  return legal[Math.floor(random() * legal.length)];
}

// One RefereeMessage of a stream (Play or ConnectBot) in, the BotMessage answering it out (null:
// nothing to answer). The same logic as the unary handlers below.
function answerMessage(message, options, random, log) {
  const reply = { id: message.id };
  switch (message.body) {
    case 'get_info':
      reply.info = { name: options.name, version: '1', games: [] };
      return reply;
    case 'ping':
      reply.pong = {};
      return reply;
    case 'start_match':
      log(`start ${message.start_match.match_id} (stream)`);
      reply.started = {};
      return reply;
    case 'end_match':
      log(`end ${message.end_match.match_id} (stream)`);
      reply.ended = {};
      return reply;
    case 'choose_action':
      try {
        reply.action = { action: chooseAction(message.choose_action, random) };
      } catch (error) {
        console.error(`chooseAction failed on request ${message.id}: ${error.stack}`);
        reply.failure = { detail: `chooseAction failed: ${error.message}`.slice(0, 200) };
      }
      return reply;
    default:
      return null; // a withdrawal (this bot answers at once, nothing to stop) or a newer body
  }
}

// Answer every message of an open stream: `call` is a Play call (serving) or a ConnectBot call
// (dialling out); `wrap` puts a batch of BotMessages in that call's message type.
function playStream(call, options, random, log, wrap) {
  call.on('data', (batch) => {
    // One gRPC message carries a batch of one or more messages, to handle in order.
    const replies = [];
    for (const message of batch.messages) {
      const reply = answerMessage(message, options, random, log);
      if (reply !== null) replies.push(reply);
    }
    if (replies.length > 0) call.write(wrap(replies));
  });
}

// Dial the arena's ConnectBot as options.botId; dial again, with a back-off that doubles up to
// 30 s (reset once the arena spoke), whenever the stream ends. Statuses that would only repeat
// (a wrong token, an unknown bot) end the process.
function connect(ArenaService, options, log) {
  const random = seededRandom(options.seed);
  const credentials = options.tls
    ? grpc.credentials.createSsl(options.caFile ? fs.readFileSync(options.caFile) : null)
    : grpc.credentials.createInsecure();
  const client = new ArenaService(options.connect, credentials);
  const final = new Set([
    grpc.status.UNAUTHENTICATED,
    grpc.status.PERMISSION_DENIED,
    grpc.status.NOT_FOUND,
    grpc.status.FAILED_PRECONDITION,
    grpc.status.INVALID_ARGUMENT,
    grpc.status.UNIMPLEMENTED,
  ]);
  let wait = 500;
  let current = null;
  const dial = () => {
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${options.token}`);
    const call = client.ConnectBot(metadata);
    current = call;
    let heard = false;
    call.on('data', () => {
      heard = true;
    });
    playStream(call, options, random, log, (messages) => ({ messages }));
    let ended = false;
    const again = (why) => {
      if (ended) return;
      ended = true;
      if (heard) wait = 500;
      const delay = wait * (0.5 + Math.random() / 2);
      wait = Math.min(wait * 2, 30000);
      log(`stream ended (${why}); dialling again in ${Math.round(delay)} ms`);
      setTimeout(dial, delay).unref();
      keepAlive.refresh();
    };
    call.on('error', (error) => {
      if (final.has(error.code)) {
        console.error(`error: the arena refused the bot: ${error.details}`);
        process.exit(1);
      }
      again(error.details);
    });
    call.on('end', () => again('ended by the arena'));
    call.write({ messages: [{ id: '0', hello: { bot_id: options.botId } }] });
  };
  const keepAlive = setInterval(() => {}, 60000); // the process lives while it dials
  dial();
  console.log(`CONNECTING ${options.connect}`);
  return () => {
    clearInterval(keepAlive);
    if (current !== null) current.cancel();
    client.close();
  };
}

function makeHandlers(options, log) {
  const random = seededRandom(options.seed);
  return {
    Play(call) {
      playStream(call, options, random, log, (messages) => ({ messages }));
      call.on('end', () => call.end());
    },
    GetInfo(call, callback) {
      callback(null, { name: options.name, version: '1', games: [] });
    },
    StartMatch(call, callback) {
      const { match_id, settings, seat } = call.request;
      log(`start ${match_id}: ${settings.game}, ${settings.num_seats} seats, seat ${seat}`);
      callback(null, {});
    },
    ChooseAction(call, callback) {
      const request = call.request;
      if (!request.legal_actions || request.legal_actions.length === 0) {
        callback({ code: grpc.status.INVALID_ARGUMENT, details: 'no legal actions' });
        return;
      }
      // A bug in chooseAction becomes an INTERNAL error for this call (a fault the referee
      // records and covers with a default action), not a crash of the whole bot.
      let action;
      try {
        action = chooseAction(request, random);
      } catch (error) {
        console.error(`chooseAction failed at move ${request.move_index}: ${error.stack}`);
        callback({ code: grpc.status.INTERNAL, details: `chooseAction failed: ${error.message}` });
        return;
      }
      log(`move ${request.move_index} seat ${request.seat}: ${JSON.stringify(action)}`);
      callback(null, { action });
    },
    EndMatch(call, callback) {
      const { match_id, status, outcome } = call.request;
      const scores = outcome && outcome.scores ? outcome.scores.join(' ') : '';
      log(`end ${match_id}: ${status}, scores ${scores}`);
      callback(null, {});
    },
  };
}

function main() {
  let options;
  try {
    options = parseCommandLine(process.argv.slice(2));
  } catch (error) {
    console.error(`${error.message}\n${USAGE}`);
    process.exit(2);
  }
  const log = options.verbose ? (line) => console.error(line) : () => {};
  const { BotService, ArenaService } = loadProtos(options.protoRoot);
  if (options.connect) {
    const begin = (token) => {
      const hangUp = connect(ArenaService, { ...options, token }, log);
      for (const signal of ['SIGTERM', 'SIGINT']) {
        process.on(signal, () => {
          hangUp();
          process.exit(0);
        });
      }
    };
    if (options.token === '-') {
      let input = '';
      process.stdin.on('data', (chunk) => {
        input += chunk;
      });
      process.stdin.on('end', () => begin(input.trim()));
    } else {
      begin(options.token);
    }
    return;
  }
  const server = new grpc.Server();
  server.addService(BotService.service, makeHandlers(options, log));
  server.bindAsync(options.listen, grpc.ServerCredentials.createInsecure(), (error, port) => {
    if (error) {
      console.error(`cannot listen on ${options.listen}: ${error.message}`);
      process.exit(1);
    }
    const host = options.listen.slice(0, options.listen.lastIndexOf(':'));
    console.log(`LISTENING ${host}:${port}`);
  });

  let stopping = false;
  const stop = (signal) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping`);
    // Let calls in flight finish for up to 2 s, then cut them off.
    const force = setTimeout(() => server.forceShutdown(), 2000);
    force.unref();
    server.tryShutdown(() => process.exit(0));
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main();
