"""Static files of the trace viewer (``index.html``, ``app.js``, ``style.css``), served by ``api.routes.ui``."""
