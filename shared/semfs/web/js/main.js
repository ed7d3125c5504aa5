// semfs web page: plain DOM, every string from a document or a model is inserted as text (escaped).
// One module per view (documents, search, file, entities, problems, trash, ask, upload, status, people, mail) over
// core (elements, the API, shared state, the notice), signin and router; keys holds the keyboard
// shortcuts. Importing a module wires its view's controls; this one starts the page.
import { loadConfig } from "./core.js";
import { route } from "./router.js";
import { checkKey, finishSignIn } from "./signin.js";
import "./documents.js";
import "./search.js";
import "./file.js";
import "./entities.js";
import "./problems.js";
import "./trash.js";
import "./ask.js";
import "./upload.js";
import "./status.js";
import "./people.js";
import "./mail.js";
import "./keys.js";

loadConfig().then(finishSignIn).then(checkKey).then(route);
